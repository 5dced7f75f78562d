"""fuseplan_inductor"""

"""Onboarding: the demo organization (``seed_demo``) and the starter agent every new organization gets."""

"""Helpers shared by the test suites (tests/ is on sys.path: `from lib.term import Term`)."""

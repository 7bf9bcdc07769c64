"""Helpers the tests share: fakes, harnesses, servers. No test module is imported by another."""

"""A scripted provider on 127.0.0.1 for the offline demo, the tests and the bench."""

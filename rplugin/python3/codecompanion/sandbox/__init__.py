"""Kernel sandboxes for the commands tools run: Landlock and seccomp on Linux, Seatbelt on macOS."""

"""The Neovim side: the only package that imports pynvim. It implements the core's ports."""

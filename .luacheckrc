-- luacheck: the Lua linter `make lint` runs (Neovim's LuaJIT, `vim` is its global).
std = "luajit"
globals = { "vim" }
max_line_length = 100
self = false
exclude_files = { ".venv/**" }

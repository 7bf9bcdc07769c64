-- The builtin slash commands: /buffer, /file, /fetch, /symbols, /now, /help, /image, /compact,
-- /rules.
-- Each adds context to the chat's next message (codecompanion.context) or text to the message.
local M = {}

local function context()
  return require("codecompanion.context")
end

local function warn(text)
  require("codecompanion.render").notify(text, "warn")
end

--- Ask for the argument with vim.ui.input (`completion` as in input()), then run `fn(arg)`.
local function ask(prompt, completion, fn)
  vim.ui.input({ prompt = prompt, completion = completion }, function(value)
    if value and vim.trim(value) ~= "" then
      fn(vim.trim(value))
    end
  end)
end

local function add_file(bufnr, path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  if vim.fn.filereadable(full) ~= 1 then
    warn(("/file: no readable file %s"):format(path))
    return false
  end
  context().add(bufnr, context().from_file(full))
  return true
end

local function file(bufnr, arg)
  if arg then
    return add_file(bufnr, arg)
  end
  if require("codecompanion.preview").stock_select() then
    -- The stock select would print every file of the project as a numbered list.
    return ask("Add a file: ", "file", function(path)
      add_file(bufnr, path)
    end)
  end
  context().pick_file(bufnr)
end

local function buffer(bufnr, arg)
  if not arg then
    return context().pick_buffer(bufnr)
  end
  local found = vim.fn.bufnr(arg)
  if found <= 0 or not vim.api.nvim_buf_is_loaded(found) then
    warn(("/buffer: no loaded buffer %s"):format(arg))
    return false
  end
  context().add(bufnr, context().from_buffer(found, "buffer"))
  return true
end

local function now()
  return os.date("%a, %d %b %Y %H:%M:%S %z")
end

--- The section of a help file that tag `tag` starts: up to the next separator line.
local function help_section(tag)
  for _, tags in ipairs(vim.api.nvim_get_runtime_file("doc/tags", true)) do
    for _, line in ipairs(vim.fn.readfile(tags)) do
      local name, help_file = line:match("^(.-)\t(.-)\t")
      if name == tag then
        local path = vim.fs.joinpath(vim.fs.dirname(tags), help_file)
        local lines = vim.fn.readfile(path)
        local marker = "*" .. tag .. "*"
        for i, text in ipairs(lines) do
          if text:find(marker, 1, true) then
            local section = {}
            for j = i, math.min(#lines, i + 300) do
              if j > i and (lines[j]:match("^===+$") or lines[j]:match("^%-%-%-+$")) then
                break
              end
              table.insert(section, lines[j])
            end
            return section, path
          end
        end
      end
    end
  end
  return nil
end

local function help(bufnr, arg)
  local function add(tag)
    local section = help_section(tag)
    if not section then
      warn(("/help: no help tag %s"):format(tag))
      return false
    end
    context().add(bufnr, { kind = "help", path = tag, filetype = "help", lines = section })
    return true
  end
  if arg then
    return add(arg)
  end
  ask("Help tag: ", "help", add)
end

--- A function adding `make(path)`'s context item to the chat's next message: true when it
--- made one (`make` says why not).
---@param bufnr integer
---@param make fun(path: string): table?
---@return fun(path: string): boolean
local function adder(bufnr, make)
  return function(path)
    local item = make(path)
    if item then
      context().add(bufnr, item)
    end
    return item ~= nil
  end
end

local function symbols(bufnr, arg)
  local add = adder(bufnr, require("codecompanion.slash.symbols").outline)
  if arg then
    return add(arg)
  end
  local last = context().last_buffer()
  if last and vim.api.nvim_buf_get_name(last) ~= "" then
    return add(vim.api.nvim_buf_get_name(last))
  end
  ask("Outline of file: ", "file", add)
end

local function fetch(bufnr, arg)
  local function go(url)
    if not url:match("^https?://") then
      warn("/fetch takes an http:// or https:// URL")
      return false
    end
    local id = require("codecompanion").chat_id(bufnr)
    require("codecompanion.host").notify("slash_fetch", { id = id, bufnr = bufnr, url = url })
    return true
  end
  if arg then
    return go(arg)
  end
  ask("Fetch URL: ", nil, go)
end

local function image(bufnr, arg)
  local add = adder(bufnr, context().from_image)
  if arg then
    return add(arg)
  end
  ask("Image file: ", "file", add)
end

--- Register the builtin commands with `registry`.
---@param registry { register: fun(name: string, spec: table) } the slash module
function M.register(registry)
  local commands = {
    buffer = { description = "Add an open buffer to the message", run = buffer },
    file = { description = "Add a file to the message (/file path)", run = file },
    fetch = { description = "Add a web page to the message (/fetch url)", run = fetch },
    symbols = { description = "Add an outline of a file (Tree-sitter symbols)", run = symbols },
    now = { description = "Insert the current date and time", run = now },
    help = { description = "Add a :help section to the message (/help tag)", run = help },
    compact = {
      description = "Summarise the earlier conversation now (keeps the recent turns)",
      run = function(bufnr)
        require("codecompanion.chat").compact(bufnr)
        return true
      end,
    },
    rules = {
      description = "Pick the rules files (AGENTS.md, CLAUDE.md, ...) this chat loads",
      run = function(bufnr)
        require("codecompanion.chat").rules(bufnr)
        return true
      end,
    },
    skills = {
      description = "Pick the skills (SKILL.md folders) this chat offers the model",
      run = function(bufnr)
        require("codecompanion.chat").skills(bufnr)
        return true
      end,
    },
    image = { description = "Add an image file to the message (/image path)", run = image },
  }
  for name, spec in pairs(commands) do
    registry.register(name, spec)
  end
end

return M

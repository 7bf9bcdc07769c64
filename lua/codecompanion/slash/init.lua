-- Slash commands of the chat buffer: a small registry. A command is a name, a one-line
-- description (shown in completion and under `?`) and `run(bufnr, arg)`, which usually adds
-- context to the chat's next message (see codecompanion.context). Other modules add theirs:
--
--   require("codecompanion.slash").register("now", {
--     description = "Insert the date and time",
--     run = function(bufnr, arg) ... end,
--   })
--
-- A command runs when it is picked in completion (without an argument: it may ask for one), or
-- when a message being sent has a line `/name [arg]` of its own (the line is taken out). `run`
-- returns true when it is done at once (the message is then sent with what it added); a command
-- that asks first (a picker) returns nothing, and the rest of the message waits in the chat.
local M = {}

---@class codecompanion.SlashCommand
---@field description string
---@field run fun(bufnr: integer, arg: string|nil): boolean|string|nil

---@type table<string, codecompanion.SlashCommand>
local registry = {}
local loaded = false

--- The builtin commands register on first use (they load their modules lazily themselves).
local function ensure()
  if not loaded then
    loaded = true
    require("codecompanion.slash.builtin").register(M)
  end
end

--- Add (or replace) the command `/name`.
---@param name string
---@param spec codecompanion.SlashCommand
function M.register(name, spec)
  ensure()
  assert(type(name) == "string" and name:match("^[%w_%-]+$"), "slash command names are words")
  assert(type(spec.run) == "function", "a slash command needs run(bufnr, arg)")
  registry[name] = { description = spec.description or "", run = spec.run }
end

--- The command `/name` (without the slash), or nil.
---@return codecompanion.SlashCommand|nil
---@param name string
function M.get(name)
  ensure()
  return registry[name]
end

--- Completion items for every command, sorted by name.
---@return codecompanion.CompletionItem[]
function M.items()
  ensure()
  local items = {}
  for name, spec in pairs(registry) do
    table.insert(items, { word = "/" .. name, kind = "command", menu = spec.description })
  end
  table.sort(items, function(a, b)
    return a.word < b.word
  end)
  return items
end

--- Run `/name` for chat `bufnr`: whether it is done (not when it asks first, fails or is
--- unknown), and the text it puts in the message, if any.
---@return boolean done
---@return string|nil text
---@param bufnr integer the chat
---@param name string with or without its slash
---@param arg? string
function M.run(bufnr, name, arg)
  name = name:gsub("^/", "")
  local spec = M.get(name)
  if not spec then
    return false, nil
  end
  local ok, result = pcall(spec.run, bufnr, arg ~= "" and arg or nil)
  if not ok then
    require("codecompanion.render").notify(("/%s: %s"):format(name, tostring(result)), "error")
    return false, nil
  end
  if type(result) == "string" then
    return true, result
  end
  return result == true, nil
end

--- Run the command lines of a message being sent (`/name [arg]` alone on a line, for a known
--- name): the message with each replaced by its text (or taken out), and whether all are done.
---@return string text
---@return boolean done
---@return integer count how many commands ran
---@param bufnr integer the chat
---@param text string the message
function M.run_lines(bufnr, text)
  local kept, done, count = {}, true, 0
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    local name, arg = line:match("^%s*/([%w_%-]+)%s*(.-)%s*$")
    if name and M.get(name) then
      count = count + 1
      local ok, inserted = M.run(bufnr, name, arg)
      done = done and ok
      if inserted then
        table.insert(kept, inserted)
      end
    else
      table.insert(kept, line)
    end
  end
  return vim.trim(table.concat(kept, "\n")), done, count
end

return M

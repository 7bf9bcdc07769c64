-- Variables of a chat message: `#{name}` in the text is replaced by a pointer to a context block
-- read from the editor when the message is sent. Each reads from the chat's source (the last file
-- buffer and its window, codecompanion.context.source) and returns a context item (a list of
-- them for `#{buffers}`), or nil and why.
local M = {}

local TERMINAL_LINES = 200 -- the last lines of a terminal's output that #{terminal} sends

local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

local function name_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= "" and relative(name) or ("[No Name " .. bufnr .. "]")
end

local function is_chat(bufnr)
  return vim.bo[bufnr].filetype == "codecompanion"
end

local function buffer(source)
  if not source.bufnr then
    return nil, "no file buffer was open before the chat"
  end
  return require("codecompanion.context").from_buffer(source.bufnr, "buffer")
end

--- The last visual selection of the source buffer (its `'<` and `'>` marks).
local function selection(source)
  if not source.bufnr then
    return nil, "no file buffer was open before the chat"
  end
  local first = vim.api.nvim_buf_get_mark(source.bufnr, "<")
  local last = vim.api.nvim_buf_get_mark(source.bufnr, ">")
  if first[1] == 0 or last[1] == 0 then
    return nil, ("nothing was selected in %s"):format(name_of(source.bufnr))
  end
  local lines = vim.api.nvim_buf_get_lines(source.bufnr, first[1] - 1, last[1], false)
  return {
    kind = "selection",
    path = ("%s:%d-%d"):format(name_of(source.bufnr), first[1], last[1]),
    filetype = vim.bo[source.bufnr].filetype,
    lines = lines,
    first = first[1],
    file = require("codecompanion.context").from_buffer(source.bufnr).file,
  }
end

local SEVERITY = { "ERROR", "WARN", "INFO", "HINT" }

local function diagnostics(source)
  if not source.bufnr then
    return nil, "no file buffer was open before the chat"
  end
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(source.bufnr)) do
    local where = ("%d:%d"):format(d.lnum + 1, d.col + 1)
    local code = vim.api.nvim_buf_get_lines(source.bufnr, d.lnum, d.lnum + 1, false)[1] or ""
    local message = d.message:gsub("\n", " ")
    local from = d.source and (" " .. d.source) or ""
    table.insert(lines, ("%s %s%s: %s"):format(where, SEVERITY[d.severity] or "?", from, message))
    table.insert(lines, "    " .. vim.trim(code))
  end
  if #lines == 0 then
    return nil, ("%s has no diagnostics"):format(name_of(source.bufnr))
  end
  return {
    kind = "diagnostics",
    path = name_of(source.bufnr),
    filetype = "",
    lines = lines,
    numbered = false,
  }
end

--- What the windows of this tab other than chats show: each window's visible lines.
local function viewport()
  local lines = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local bufnr = vim.api.nvim_win_get_buf(win)
    local config = vim.api.nvim_win_get_config(win)
    if not is_chat(bufnr) and config.relative == "" and vim.bo[bufnr].buftype == "" then
      local top = vim.fn.line("w0", win)
      local bottom = vim.fn.line("w$", win)
      table.insert(
        lines,
        ("%s lines %d-%d (%s):"):format(name_of(bufnr), top, bottom, vim.bo[bufnr].filetype)
      )
      for i, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, top - 1, bottom, false)) do
        table.insert(lines, ("%d: %s"):format(top + i - 1, text))
      end
      table.insert(lines, "")
    end
  end
  if #lines == 0 then
    return nil, "no window shows a file"
  end
  return {
    kind = "viewport",
    path = "visible windows",
    filetype = "",
    lines = lines,
    numbered = false,
  }
end

local function quickfix()
  local list = vim.fn.getqflist({ items = 0, title = 0 })
  local lines = {}
  for _, entry in ipairs(list.items) do
    local file = entry.bufnr > 0 and name_of(entry.bufnr) or ""
    table.insert(lines, ("%s:%d:%d: %s"):format(file, entry.lnum, entry.col, vim.trim(entry.text)))
  end
  if #lines == 0 then
    return nil, "the quickfix list is empty"
  end
  local title = list.title ~= "" and list.title or "quickfix"
  return { kind = "quickfix list", path = title, filetype = "", lines = lines, numbered = false }
end

--- Whether `bufnr` holds something to share: a listed file buffer other than a chat, with
--- a name or with text typed into it.
local function shareable(bufnr)
  local kind = vim.bo[bufnr].buftype
  if not vim.bo[bufnr].buflisted or is_chat(bufnr) or (kind ~= "" and kind ~= "acwrite") then
    return false
  end
  if vim.api.nvim_buf_get_name(bufnr) ~= "" then
    return true
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  return #lines > 1 or (lines[1] or "") ~= ""
end

--- Every open buffer's content, one context item each (a buffer not loaded yet is read from
--- its file), as CodeCompanion's `#{buffers}` shares them.
local function buffers()
  local context = require("codecompanion.context")
  local items = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if shareable(bufnr) then
      local item = context.from_buffer(bufnr, "buffer")
      local name = vim.api.nvim_buf_get_name(bufnr)
      if not vim.api.nvim_buf_is_loaded(bufnr) and not context.unreadable(name) then
        item.lines = vim.fn.readfile(name)
      end
      table.insert(items, item)
    end
  end
  if #items == 0 then
    return nil, "no file buffer is open"
  end
  return items
end

--- The last lines of the terminal buffer used last (trailing empty lines dropped).
local function terminal()
  local best, best_used = nil, -1
  for _, info in ipairs(vim.fn.getbufinfo()) do
    if vim.bo[info.bufnr].buftype == "terminal" and info.lastused > best_used then
      best, best_used = info.bufnr, info.lastused
    end
  end
  if not best then
    return nil, "no terminal buffer is open"
  end
  local lines = vim.api.nvim_buf_get_lines(best, 0, -1, false)
  while #lines > 0 and vim.trim(lines[#lines]) == "" do
    table.remove(lines)
  end
  lines = vim.list_slice(lines, math.max(1, #lines - TERMINAL_LINES + 1))
  return { kind = "terminal", path = name_of(best), filetype = "", lines = lines, numbered = false }
end

---@type table<string, { description: string, read: fun(source: table): table|nil, string|nil }>
local VARIABLES = {
  buffer = {
    description = "The buffer you were in before the chat (numbered lines)",
    read = buffer,
  },
  selection = { description = "The last visual selection in that buffer", read = selection },
  diagnostics = { description = "That buffer's diagnostics", read = diagnostics },
  viewport = { description = "What the other windows show", read = viewport },
  quickfix = { description = "The quickfix list", read = quickfix },
  buffers = { description = "Every open buffer (numbered lines)", read = buffers },
  terminal = { description = "The last terminal's recent output", read = terminal },
}

--- The variable `name`, or nil.
---@param name string
---@return table? variable { description, read }
function M.get(name)
  return VARIABLES[name]
end

--- Completion items for every variable, sorted.
---@return codecompanion.CompletionItem[]
function M.items()
  local names = vim.tbl_keys(VARIABLES)
  table.sort(names)
  return vim.tbl_map(function(name)
    return { word = "#{" .. name .. "}", kind = "variable", menu = VARIABLES[name].description }
  end, names)
end

return M

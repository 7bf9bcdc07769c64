-- The chat buffer's keymaps and actions; each action is one notification to the host.
local config = require("codecompanion.config")
local host = require("codecompanion.host")
local render = require("codecompanion.render")

local M = {}

---@param bufnr integer
---@return string?
local function chat_id(bufnr)
  return require("codecompanion.chat_buffers").chat_id(bufnr)
end

--- Send `method` with `args` and the chat's id to the host (re-attaching the chat first).
---@param bufnr? integer default: the current buffer
---@param method string
---@param args? table
---@return boolean sent
local function send(bufnr, method, args)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  require("codecompanion.chat_buffers").reattach(bufnr)
  args = args or {}
  args.id = chat_id(bufnr)
  if not args.id then
    require("codecompanion.notify").notify("not a chat buffer", "warn")
    return false
  end
  return host.notify(method, args)
end

--- Send the message typed under the last `## Me` (with its context) to the host.
---@param bufnr? integer default: the current buffer
function M.submit(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local text = render.user_message(bufnr)
  if text == "" then
    require("codecompanion.notify").notify("nothing to send: type your message under ## Me")
    return
  end
  if vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
    vim.cmd("stopinsert")
  end
  local rest, done, count = require("codecompanion.slash").run_lines(bufnr, text)
  if count > 0 then
    -- The chat shows what is sent: command lines out, their text (`/now`) in.
    render.set_user_message(bufnr, rest)
    if not done or rest == "" then
      return -- a command asks first, or nothing is left to send: the rest waits
    end
    text = rest
  end
  local context = require("codecompanion.context").take(bufnr, text)
  send(bufnr, "chat_submit", { text = text, context = context })
end

--- Stop the request and the tools running for the chat.
---@param bufnr? integer default: the current buffer
function M.stop(bufnr)
  send(bufnr, "chat_stop")
end

--- Toggle YOLO mode (tools run without approval) for the chat.
---@param bufnr? integer default: the current buffer
function M.toggle_yolo(bufnr)
  send(bufnr, "chat_yolo")
end

--- Forget the chat's "always" approvals and turn YOLO off.
---@param bufnr? integer default: the current buffer
function M.forget_approvals(bufnr)
  send(bufnr, "chat_forget_approvals")
end

--- Summarise the earlier conversation now (`/compact`), keeping the recent turns.
---@param bufnr? integer default: the current buffer
function M.compact(bufnr)
  send(bufnr, "chat_compact")
end

--- Pick the rules files this chat loads (`/rules`): each pick turns one off or back on.
---@param bufnr? integer default: the current buffer
function M.rules(bufnr)
  send(bufnr, "chat_rules")
end

--- Pick the skills this chat offers (`/skills`): each pick turns one off or back on.
---@param bufnr? integer default: the current buffer
function M.skills(bufnr)
  send(bufnr, "chat_skills")
end

local MODES = { ask = true, edits = true, sandboxed = true, yolo = true, next = true }
-- The order `"next"` (and `gtm`) goes through, as the host's sandbox.settings.MODES.
local CYCLE = { "ask", "edits", "sandboxed", "yolo" }

--- Read or switch a chat's permission mode: "ask", "edits", "sandboxed" or "yolo" ("next"
--- cycles). The chat is `bufnr`, else the current buffer when it is a chat, else the last chat.
---@param name? string the mode to switch to; nil only reads it
---@param bufnr? integer
---@return string? mode the chat's mode (after a switch: the one asked for), nil without a chat
function M.mode(name, bufnr)
  local buffers = require("codecompanion.chat_buffers")
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not buffers.chat_id(bufnr) then
    bufnr = buffers.last_chat()
  end
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  if name == nil then
    return vim.b[bufnr].codecompanion_mode
  end
  if not MODES[name] then
    require("codecompanion.notify").notify(
      "unknown mode " .. tostring(name) .. " (ask, edits, sandboxed, yolo)",
      "error"
    )
    return vim.b[bufnr].codecompanion_mode
  end
  local current = vim.b[bufnr].codecompanion_mode
  if name == "next" then
    local at = vim.fn.index(CYCLE, current or "ask")
    name = CYCLE[(math.max(at, 0) + 1) % #CYCLE + 1]
  end
  if send(bufnr, "chat_mode", { mode = name }) ~= false then
    -- Shown at once (status(), a statusline): the host sets it again as it switches.
    vim.b[bufnr].codecompanion_mode = name
    vim.b[bufnr].codecompanion_yolo = name == "yolo"
  end
  return name
end

--- Switch the chat under the cursor to the next permission mode.
---@param bufnr? integer
function M.next_mode(bufnr)
  M.mode("next", bufnr or vim.api.nvim_get_current_buf())
end

--- Pick the chat's agent mode (an agent chat: the modes its agent offers).
---@param bufnr? integer default: the current buffer
function M.agent_mode(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local state = vim.b[bufnr].codecompanion_acp_mode
  if type(state) ~= "table" or type(state.modes) ~= "table" or #state.modes == 0 then
    render.notify("this chat's agent offers no modes (or no agent drives this chat)", "info")
    return
  end
  vim.ui.select(state.modes, {
    prompt = "Agent mode",
    kind = "codecompanion.agent_mode",
    format_item = function(mode)
      return (mode.id == state.current and "* " or "  ") .. mode.name
    end,
  }, function(mode)
    if mode then
      send(bufnr, "chat_agent_mode", { mode = mode.id })
    end
  end)
end

--- Pick one of the agent's options (model, thought level, ...), then its value.
---@param bufnr? integer default: the current buffer
function M.agent_options(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local options = vim.b[bufnr].codecompanion_acp_options
  if type(options) ~= "table" or #options == 0 then
    render.notify("this chat's agent offers no options (or no agent drives this chat)", "info")
    return
  end
  vim.ui.select(options, {
    prompt = "Agent option",
    kind = "codecompanion.agent_option",
    format_item = function(option)
      return ("%s: %s"):format(option.name, tostring(option.current))
    end,
  }, function(option)
    if not option then
      return
    end
    vim.ui.select(option.values, {
      prompt = option.name,
      kind = "codecompanion.agent_option_value",
      format_item = function(value)
        return (value.value == option.current and "* " or "  ") .. value.name
      end,
    }, function(value)
      if value then
        send(bufnr, "chat_agent_option", { option = option.id, value = value.value })
      end
    end)
  end)
end

--- Ask the model again for the last answer.
---@param bufnr? integer default: the current buffer
function M.regenerate(bufnr)
  send(bufnr, "chat_regenerate")
end

--- Clear the chat: it goes on as a new saved chat (the old one can still be restored).
---@param bufnr? integer default: the current buffer
function M.clear(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local old = chat_id(bufnr)
  if not old then
    send(bufnr, "chat_clear")
    return
  end
  require("codecompanion.chat_buffers").reattach(bufnr)
  local new = require("codecompanion.chat_buffers").renew_id(bufnr)
  host.notify("chat_clear", { id = old, new_id = new })
end

--- The call id of the tool line (or folded output) under the cursor, if any.
---@param bufnr integer
---@return string?
local function call_under_cursor(bufnr)
  local row = vim.fn.line(".") - 1
  local best, best_row = nil, -1
  for call_id, entry in pairs(render.state(bufnr).tools) do
    if entry.context then
      goto continue
    end
    local mark = vim.api.nvim_buf_get_extmark_by_id(
      bufnr,
      vim.api.nvim_create_namespace("codecompanion_tools"),
      entry.mark,
      {}
    )
    local start = mark[1]
    if start and start <= row and start > best_row then
      best, best_row = call_id, start
    end
    ::continue::
  end
  return best
end

--- Open the full output of the tool call under the cursor in a scratch buffer.
---@param bufnr? integer default: the current buffer
function M.full_output(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  send(bufnr, "chat_full_output", { call_id = call_under_cursor(bufnr) or vim.NIL })
end

--- Pick the adapter, then the model; the host lists models without Neovim waiting.
---@param bufnr? integer default: the current buffer
function M.change_adapter(bufnr)
  send(bufnr, "chat_pick_adapter")
end

--- A choice asked by the host; answered by notification.
---@param chan integer
---@param rid integer
---@param req { items: string[], prompt: string }
function M.pick(chan, rid, req)
  vim.schedule(function()
    vim.ui.select(
      req.items,
      { prompt = req.prompt, kind = "codecompanion.pick" },
      function(_, index)
        pcall(
          vim.rpcnotify,
          chan,
          "codecompanion",
          "editor_reply",
          { rid = rid, value = index or vim.NIL }
        )
      end
    )
  end)
end

--- Move the cursor to the next (1) or previous (-1) header.
---@param direction 1|-1
local function jump(direction)
  local rows = render.header_rows(0)
  local cur = vim.fn.line(".")
  if direction > 0 then
    for _, row in ipairs(rows) do
      if row > cur then
        return vim.api.nvim_win_set_cursor(0, { row, 0 })
      end
    end
  else
    for i = #rows, 1, -1 do
      if rows[i] < cur then
        return vim.api.nvim_win_set_cursor(0, { rows[i], 0 })
      end
    end
  end
end

local ACTIONS = {
  send = { fn = M.submit, desc = "Send the message" },
  stop = { fn = M.stop, desc = "Stop the request and running tools" },
  change_adapter = { fn = M.change_adapter, desc = "Change adapter and model" },
  yolo = { fn = M.toggle_yolo, desc = "Toggle YOLO mode (skip approvals)" },
  clear_approvals = {
    fn = M.forget_approvals,
    desc = "Forget the chat's remembered approvals (and YOLO)",
  },
  mode = { fn = M.next_mode, desc = "Next permission mode (ask, edits, sandboxed, yolo)" },
  agent_mode = { fn = M.agent_mode, desc = "Pick the agent's mode (agent chats)" },
  agent_options = {
    fn = M.agent_options,
    desc = "Pick an agent option: model, thought level, ... (agent chats)",
  },
  regenerate = { fn = M.regenerate, desc = "Regenerate the last answer" },
  clear = { fn = M.clear, desc = "Clear the chat" },
  rewind = {
    fn = function(bufnr)
      require("codecompanion.checkpoints").pick(bufnr)
    end,
    desc = "Rewind code and/or conversation to before a turn",
  },
  rewind_undo = {
    fn = function(bufnr)
      require("codecompanion.checkpoints").undo(bufnr)
    end,
    desc = "Undo the last rewind",
  },
  review = {
    fn = function(bufnr)
      require("codecompanion.checkpoints").review({ bufnr = bufnr })
    end,
    desc = "Review the chat's changes (quickfix and diff view)",
  },
  next_turn = {
    fn = function()
      jump(1)
    end,
    desc = "Next turn",
  },
  previous_turn = {
    fn = function()
      jump(-1)
    end,
    desc = "Previous turn",
  },
  full_output = { fn = M.full_output, desc = "Open the full output of the tool under the cursor" },
  help = {
    fn = function()
      M.help()
    end,
    desc = "Show the keymaps",
  },
}

--- Call `fn` for each configured key of each chat action.
---@param fn fun(name: string, mode: string, key: string)
local function each_mapping(fn)
  for name, modes in pairs(config.options.keymaps or {}) do
    if modes and ACTIONS[name] then
      for mode, lhs in pairs(modes) do
        for _, key in ipairs(type(lhs) == "table" and lhs or { lhs }) do
          fn(name, mode, key)
        end
      end
    end
  end
end

--- Show the chat's keymaps in a float (`q` closes it).
function M.help()
  local lines = {}
  each_mapping(function(name, mode, key)
    table.insert(lines, ("%-8s %-3s %s"):format(key, mode, ACTIONS[name].desc))
  end)
  table.sort(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  -- The window fits its content (and the editor).
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.api.nvim_strwidth(line))
  end
  width = math.min(width, vim.o.columns - 4)
  vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    width = width,
    height = math.min(#lines, vim.o.lines - 6),
    row = 2,
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    border = "rounded",
    title = " codecompanion keymaps ",
  })
  vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = buf, nowait = true })
  vim.keymap.set("n", "<Esc>", "<cmd>close<CR>", { buffer = buf, nowait = true })
end

--- Set the chat buffer's keymaps, omnifunc and completion hook.
---@param bufnr integer
function M.attach(bufnr)
  each_mapping(function(name, mode, key)
    vim.keymap.set(mode, key, function()
      ACTIONS[name].fn(bufnr)
    end, { buffer = bufnr, desc = "codecompanion: " .. ACTIONS[name].desc, nowait = true })
  end)
  vim.bo[bufnr].omnifunc = "v:lua.require'codecompanion.complete'.omnifunc"
  -- The menu narrows as you type and inserts nothing until an item is chosen.
  pcall(function()
    vim.bo[bufnr].completeopt = "menu,menuone,noinsert,noselect"
  end)
  if config.options.auto_complete ~= false then
    vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP" }, {
      buffer = bufnr,
      callback = function()
        require("codecompanion.complete").auto_open(bufnr)
      end,
    })
  end
  vim.api.nvim_create_autocmd("CompleteDone", {
    buffer = bufnr,
    callback = function()
      require("codecompanion.complete").on_complete_done(bufnr)
    end,
  })
end

--- Fold text of a tool's output (the tool line and its status) or of a context block,
--- coloured with CodeCompanionFold.
---@return [string, string][] chunks
function M.foldtext()
  local count = vim.v.foldend - vim.v.foldstart + 1
  local bufnr = vim.api.nvim_get_current_buf()
  local lines = count == 1 and "1 line" or (count .. " lines")
  local title, tail = nil, (" (%s)"):format(lines)
  for _, entry in pairs(render.state(bufnr).tools) do
    if render.body_range(bufnr, entry) == vim.v.foldstart then
      title = entry.title
      tail = entry.context and "" or (" [%s] (%s)"):format(entry.status or "?", lines)
      break
    end
  end
  title = title or vim.fn.getline(vim.v.foldstart)
  -- The status and the count stay in view: the title gives way when the window is narrow.
  local info = vim.fn.getwininfo(vim.api.nvim_get_current_win())[1]
  local room = (info and info.width - info.textoff or 80) - 2 - vim.fn.strdisplaywidth(tail)
  if room > 1 then
    title = require("codecompanion.notify").truncate(title, room)
  end
  return { { "  " .. title .. tail, "CodeCompanionFold" } }
end

return M

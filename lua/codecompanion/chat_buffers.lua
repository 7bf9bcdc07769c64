-- Chat buffers: created, known by chat id, hidden and shown again, re-attached after the host
-- restarts. Chat state lives in the Python host; this module only maps buffers to chat ids.
local config = require("codecompanion.config")
local host = require("codecompanion.host")
local render = require("codecompanion.render")
local window = require("codecompanion.window")

local M = {}

---@class codecompanion.ChatOpts
---@field adapter? string the adapter's name (default: the configured one)
---@field model? string
---@field prompt? string a first message, sent at once
---@field restore? string the id of a saved chat to reopen
---@field session? string an agent's session to load (with `adapter` naming the agent)
---@field yolo? boolean run tools without approval

-- Open chats: bufnr -> chat id, in creation order (owned here, not global state in Python).
local chats = { by_buf = {}, order = {}, last = nil, counter = 0 }

---@return string
local function new_id()
  chats.counter = chats.counter + 1
  return ("%d-%d-%d"):format(os.time(), vim.fn.getpid(), chats.counter)
end

---@param bufnr integer
---@return boolean
local function is_chat(bufnr)
  return chats.by_buf[bufnr] ~= nil
end

--- Show chat buffer `bufnr` in a window laid out as configured.
---@param bufnr integer
function M.show(bufnr)
  window.open(bufnr, is_chat)
end

--- Tell the host when the chat's last window closes (stop what runs) and when it is wiped.
---@param bufnr integer
---@param id string
local function watch_close(bufnr, id)
  -- Every window close runs it: it goes when the chat does (below).
  local on_win_closed = vim.api.nvim_create_autocmd("WinClosed", {
    callback = function(ev)
      local win = tonumber(ev.match)
      if
        not win
        or not vim.api.nvim_win_is_valid(win)
        or vim.api.nvim_win_get_buf(win) ~= bufnr
      then
        return
      end
      -- The last window of the chat closed (not hidden by Toggle): stop what runs; it is saved.
      if #vim.fn.win_findbuf(bufnr) <= 1 and not vim.b[bufnr].codecompanion_hiding then
        if not vim.bo[bufnr].modifiable and vim.v.exiting == vim.NIL then
          require("codecompanion.notify").notify(
            "the chat's window closed: its request stopped (:CodeCompanionChat Toggle hides a "
              .. "chat and lets it go on)",
            "info"
          )
        end
        host.notify("chat_stop", { id = chats.by_buf[bufnr] or id, quiet = true })
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufDelete" }, {
    buffer = bufnr,
    once = true,
    callback = function()
      if vim.b[bufnr].codecompanion_closed then
        return -- :bwipeout runs BufDelete and BufWipeout: the chat closes once
      end
      vim.b[bufnr].codecompanion_closed = true
      pcall(vim.api.nvim_del_autocmd, on_win_closed)
      local current = chats.by_buf[bufnr] or id -- a cleared chat has a new id
      host.notify("chat_close", { id = current })
      vim.api.nvim_exec_autocmds("User", {
        pattern = "CodeCompanionChatClosed",
        modeline = false,
        data = { id = current, bufnr = bufnr },
      })
      chats.by_buf[bufnr] = nil
      if chats.last == bufnr then
        chats.last = nil
      end
    end,
  })
end

---@param id string
---@return integer bufnr
local function create_buffer(id)
  local bufnr = vim.api.nvim_create_buf(true, true)
  vim.bo[bufnr].filetype = "codecompanion"
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  pcall(vim.api.nvim_buf_set_name, bufnr, ("[CodeCompanion] %d"):format(bufnr))
  vim.b[bufnr].codecompanion_chat_id = id
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { "## Me", "", "" })
  local s = render.state(bufnr)
  s.user_header = vim.api.nvim_buf_set_extmark(
    bufnr,
    vim.api.nvim_create_namespace("codecompanion"),
    0,
    0,
    render.header_mark("## Me")
  )
  chats.by_buf[bufnr] = id
  table.insert(chats.order, bufnr)
  chats.last = bufnr
  require("codecompanion.chat").attach(bufnr)
  watch_close(bufnr, id)
  return bufnr
end

--- The buffer of an open chat restored as `id`, shown (and focused); nil when none is open.
---@param id string
---@return integer?
local function show_open(id)
  for bufnr, chat in pairs(chats.by_buf) do
    if chat == id and vim.api.nvim_buf_is_valid(bufnr) then
      -- Already open: show it rather than a second buffer driving the same chat.
      local wins = vim.fn.win_findbuf(bufnr)
      if #wins == 0 then
        M.show(bufnr)
      else
        vim.api.nvim_set_current_win(wins[1])
      end
      return bufnr
    end
  end
  return nil
end

--- Open a new chat (or show a restored one that is already open).
---@param opts? codecompanion.ChatOpts
---@return integer bufnr the chat's buffer
function M.open(opts)
  opts = opts or {}
  local open = opts.restore and show_open(opts.restore)
  if open then
    return open
  end
  local id = opts.restore or new_id()
  local bufnr = create_buffer(id)
  M.show(bufnr)
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  host.notify("chat_new", {
    id = id,
    bufnr = bufnr,
    cwd = vim.fn.getcwd(),
    adapter = opts.adapter or vim.NIL,
    model = opts.model or vim.NIL,
    restore = opts.restore ~= nil,
    session = opts.session or vim.NIL,
    yolo = opts.yolo or config.options.yolo or false,
  })
  if opts.prompt and opts.prompt ~= "" then
    vim.api.nvim_buf_set_lines(bufnr, 1, -1, false, vim.split(opts.prompt, "\n", { plain = true }))
    require("codecompanion.chat").submit(bufnr)
  end
  return bufnr
end

--- The chat id of buffer `bufnr`, or nil when it is no chat.
---@param bufnr integer
---@return string?
function M.chat_id(bufnr)
  return chats.by_buf[bufnr]
end

--- The buffer of chat `id`, or nil.
---@param id string
---@return integer?
function M.chat_buffer(id)
  for bufnr, chat in pairs(chats.by_buf) do
    if chat == id then
      return bufnr
    end
  end
  return nil
end

--- A cleared chat goes on under a new id: the old one stays saved as it was.
---@param bufnr integer
---@return string id the new id
function M.renew_id(bufnr)
  local id = new_id()
  chats.by_buf[bufnr] = id
  vim.b[bufnr].codecompanion_chat_id = id
  return id
end

--- The buffer of the chat used last (or of the newest one still open), or nil.
---@return integer?
function M.last_chat()
  if chats.last and vim.api.nvim_buf_is_valid(chats.last) then
    return chats.last
  end
  for i = #chats.order, 1, -1 do
    local b = chats.order[i]
    if vim.api.nvim_buf_is_valid(b) and chats.by_buf[b] then
      return b
    end
  end
  return nil
end

--- Hide the last chat's windows, or show it again (a new chat when there is none).
---@return integer bufnr
function M.toggle()
  local bufnr = M.last_chat()
  if not bufnr then
    return M.open()
  end
  local wins = vim.fn.win_findbuf(bufnr)
  if #wins > 0 then
    -- Hiding is not closing: a running answer goes on streaming into the hidden buffer.
    vim.b[bufnr].codecompanion_hiding = true
    for _, win in ipairs(wins) do
      pcall(vim.api.nvim_win_close, win, false)
    end
    vim.b[bufnr].codecompanion_hiding = false
    vim.api.nvim_exec_autocmds("User", {
      pattern = "CodeCompanionChatHidden",
      modeline = false,
      data = { id = chats.by_buf[bufnr], bufnr = bufnr },
    })
  else
    M.show(bufnr)
    host.notify("chat_opened", { id = chats.by_buf[bufnr] })
  end
  return bufnr
end

--- Called when the host exits: open chats are re-attached (restored from disk) on the next start.
function M.on_host_exit()
  for bufnr, _ in pairs(chats.by_buf) do
    if vim.api.nvim_buf_is_valid(bufnr) then
      local busy = not vim.bo[bufnr].modifiable
      require("codecompanion.spinner").stop(bufnr)
      vim.bo[bufnr].modifiable = true
      vim.b[bufnr].codecompanion_detached = true
      if busy then
        -- A turn was running: close it in the buffer so the next message is only what is typed.
        render.apply(bufnr, {
          { kind = "block", text = "_[incomplete: the host stopped]_" },
          { kind = "ready", text = "## Me" },
        })
      end
    end
  end
end

--- Re-attach the chat of `bufnr` if its host died (called before any message to the host).
---@param bufnr integer
function M.reattach(bufnr)
  if not vim.b[bufnr].codecompanion_detached then
    return
  end
  vim.b[bufnr].codecompanion_detached = false
  host.notify("chat_new", {
    id = chats.by_buf[bufnr],
    bufnr = bufnr,
    cwd = vim.fn.getcwd(),
    adapter = vim.NIL,
    model = vim.NIL,
    restore = true,
    reattach = true,
  })
end

return M

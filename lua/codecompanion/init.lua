-- codecompanion: commands and the public Lua API. Chat state lives in the Python host;
-- Lua owns buffers, windows, keymaps and prompts.
local config = require("codecompanion.config")
local host = require("codecompanion.host")
local render = require("codecompanion.render")

local M = {}

-- Open chats: bufnr -> chat id, in creation order (owned by this module, not global state in
-- Python).
local chats = { by_buf = {}, order = {}, last = nil, counter = 0 }

function M.setup(opts)
  if not config.supported() then
    return
  end
  config.setup(opts)
  if config.options.start == "deferred" then
    -- Start the host off the start-up path: Neovim shows its UI first. The Markdown
    -- highlight queries are compiled here too, so the first chat does not pay for them.
    vim.defer_fn(function()
      host.ensure()
      pcall(vim.treesitter.query.get, "markdown", "highlights")
      pcall(vim.treesitter.query.get, "markdown_inline", "highlights")
    end, 0)
  end
end

local function new_id()
  chats.counter = chats.counter + 1
  return ("%d-%d-%d"):format(os.time(), vim.fn.getpid(), chats.counter)
end

--- A size option: a fraction of `total` (below 1) or an absolute number of cells.
local function size(value, default, total)
  value = value or default
  return math.max(1, value < 1 and math.floor(total * value) or math.floor(value))
end

--- A window of this tab that shows a chat (reused by the next chat, as CodeCompanion does).
local function chat_window()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if chats.by_buf[vim.api.nvim_win_get_buf(win)] then
      return win
    end
  end
  return nil
end

local function open_float(bufnr, win_opts)
  local width = size(win_opts.width, 0.6, vim.o.columns)
  local height = size(win_opts.height, 0.8, vim.o.lines - vim.o.cmdheight - 2)
  vim.api.nvim_open_win(bufnr, true, {
    relative = "editor",
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    border = "rounded",
    title = " CodeCompanion ",
    title_pos = "center",
  })
end

local function open_window(bufnr)
  local win_opts = config.options.window or {}
  local reuse = win_opts.layout ~= "buffer" and chat_window()
  if reuse then
    vim.api.nvim_set_current_win(reuse)
    vim.api.nvim_win_set_buf(reuse, bufnr)
  elseif win_opts.layout == "buffer" then
    vim.api.nvim_set_current_buf(bufnr)
  elseif win_opts.layout == "float" then
    open_float(bufnr, win_opts)
  elseif win_opts.layout == "horizontal" then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.api.nvim_win_set_height(0, size(win_opts.height, 0.4, vim.o.lines))
  else
    vim.cmd("botright vsplit")
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.api.nvim_win_set_width(0, size(win_opts.width, 0.45, vim.o.columns))
  end
  vim.wo.wrap = true
  vim.wo.linebreak = true
  vim.wo.foldmethod = "manual"
  vim.wo.foldtext = "v:lua.require'codecompanion.chat'.foldtext()"
end

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
  vim.api.nvim_create_autocmd("WinClosed", {
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
        host.notify("chat_stop", { id = chats.by_buf[bufnr] or id, quiet = true })
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufDelete" }, {
    buffer = bufnr,
    once = true,
    callback = function()
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
  return bufnr
end

--- Open a new chat; opts: { adapter, model, prompt, restore = id, yolo }.
function M.chat(opts)
  opts = opts or {}
  if opts.restore then
    for bufnr, id in pairs(chats.by_buf) do
      if id == opts.restore and vim.api.nvim_buf_is_valid(bufnr) then
        -- Already open: show it rather than a second buffer driving the same chat.
        if #vim.fn.win_findbuf(bufnr) == 0 then
          open_window(bufnr)
        else
          vim.api.nvim_set_current_win(vim.fn.win_findbuf(bufnr)[1])
        end
        return bufnr
      end
    end
  end
  local id = opts.restore or new_id()
  local bufnr = create_buffer(id)
  open_window(bufnr)
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  host.notify("chat_new", {
    id = id,
    bufnr = bufnr,
    cwd = vim.fn.getcwd(),
    adapter = opts.adapter or vim.NIL,
    model = opts.model or vim.NIL,
    restore = opts.restore ~= nil,
    yolo = opts.yolo or config.options.yolo or false,
  })
  if opts.prompt and opts.prompt ~= "" then
    vim.api.nvim_buf_set_lines(bufnr, 1, -1, false, vim.split(opts.prompt, "\n", { plain = true }))
    require("codecompanion.chat").submit(bufnr)
  end
  return bufnr
end

function M.chat_id(bufnr)
  return chats.by_buf[bufnr]
end

--- The buffer of chat `id`, or nil.
function M.chat_buffer(id)
  for bufnr, chat in pairs(chats.by_buf) do
    if chat == id then
      return bufnr
    end
  end
  return nil
end

--- A cleared chat goes on under a new id: the old one stays saved as it was.
function M.renew_id(bufnr)
  local id = new_id()
  chats.by_buf[bufnr] = id
  vim.b[bufnr].codecompanion_chat_id = id
  return id
end

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

function M.toggle()
  local bufnr = M.last_chat()
  if not bufnr then
    return M.chat()
  end
  local wins = vim.fn.win_findbuf(bufnr)
  if #wins > 0 then
    -- Hiding is not closing: a running answer goes on streaming into the hidden buffer.
    vim.b[bufnr].codecompanion_hiding = true
    for _, win in ipairs(wins) do
      pcall(vim.api.nvim_win_close, win, false)
    end
    vim.b[bufnr].codecompanion_hiding = false
  else
    open_window(bufnr)
    host.notify("chat_opened", { id = chats.by_buf[bufnr] })
  end
  return bufnr
end

--- Add the given lines of a buffer to the last chat as a fenced block with path and lines.
function M.add_selection(line1, line2)
  local src = vim.api.nvim_get_current_buf()
  if chats.by_buf[src] then
    return vim.notify(
      "codecompanion: Add takes lines of another buffer, not of a chat",
      vim.log.levels.WARN
    )
  end
  local target = M.last_chat()
  if target and not vim.bo[target].modifiable then
    return vim.notify(
      "codecompanion: the chat is busy: add the lines when the answer is done",
      vim.log.levels.WARN
    )
  end
  local lines = vim.api.nvim_buf_get_lines(src, line1 - 1, line2, false)
  local path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(src), ":.")
  local ft = vim.bo[src].filetype
  local bufnr = M.last_chat() or M.chat()
  local block =
    { ("`%s` lines %d-%d:"):format(path ~= "" and path or "[No Name]", line1, line2), "```" .. ft }
  vim.list_extend(block, lines)
  table.insert(block, "```")
  table.insert(block, "")
  local count = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, count, count, false, block)
  if #vim.fn.win_findbuf(bufnr) == 0 then
    open_window(bufnr)
  end
end

--- Pick a saved chat (the host lists them and asks) and reopen it.
function M.restore()
  host.notify("pick_restore", {})
end

--- Called when the host exits: open chats are re-attached (restored from disk) on the next start.
function M.on_host_exit(_)
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

--- Re-attach chats whose host died (called before any message to the host).
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

--- The chat's state for a statusline: { state, running, adapter, model } (state "" when idle).
function M.status_info(bufnr)
  bufnr = bufnr or M.last_chat()
  local id = bufnr and chats.by_buf[bufnr]
  if not id or not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  local s = render.state(bufnr)
  local running, awaiting = 0, false
  for _, entry in pairs(s.tools) do
    if entry.status == "running" then
      running = running + 1
    elseif entry.status == "awaiting_approval" then
      awaiting = true
    end
  end
  local state = ""
  if awaiting then
    state = "awaiting approval"
  elseif require("codecompanion.editor").reviewing(id) then
    state = "awaiting review"
  elseif running > 0 then
    state = ("running %d tool%s"):format(running, running == 1 and "" or "s")
  elseif require("codecompanion.stream_highlight").is_streaming(bufnr) then
    state = "streaming"
  elseif not vim.bo[bufnr].modifiable then
    state = "waiting"
  end
  return { state = state, running = running, adapter = s.adapter, model = s.model }
end

--- One short string for a statusline: e.g. "running 2 tools · openai · gpt-4.1".
function M.status(bufnr)
  local info = M.status_info(bufnr)
  if not info then
    return ""
  end
  local parts = {}
  for _, part in ipairs({ info.state, info.adapter, info.model }) do
    if part and part ~= "" then
      table.insert(parts, part)
    end
  end
  return table.concat(parts, " · ")
end

function M.reload()
  host.notify("reload", {})
end

function M.command(opts)
  local args = vim.trim(opts.args or "")
  if args == "Add" or args == "add" then
    -- Without a range, the cursor's line.
    return M.add_selection(opts.line1, opts.range > 0 and opts.line2 or opts.line1)
  end
  if args == "Toggle" or args == "toggle" then
    return M.toggle()
  end
  if args == "Restore" or args == "restore" then
    return M.restore()
  end
  local chat_opts = {}
  local rest = {}
  for _, word in ipairs(vim.split(args, "%s+", { trimempty = true })) do
    local key, value = word:match("^(%w+)=(.+)$")
    if key == "adapter" or key == "model" then
      chat_opts[key] = value
    else
      table.insert(rest, word)
    end
  end
  if #rest > 0 then
    -- Free text keeps its original spacing: take it from the raw arguments.
    chat_opts.prompt = args:gsub("adapter=%S+", ""):gsub("model=%S+", "")
    chat_opts.prompt = vim.trim(chat_opts.prompt)
  end
  if not chat_opts.adapter then
    return M.chat(chat_opts)
  end
  -- A wrong adapter name opens nothing: one line lists the valid names. The names come from
  -- the host's cache, or from the host without Neovim waiting for it.
  local function check(names)
    if vim.tbl_contains(names, chat_opts.adapter) then
      return M.chat(chat_opts)
    end
    render.notify(
      ("no adapter %q: valid names are %s"):format(chat_opts.adapter, table.concat(names, ", ")),
      "error"
    )
  end
  local known = require("codecompanion.complete").adapters(false)
  if #known > 0 then
    return check(known)
  end
  require("codecompanion.complete").fetch(function()
    local names = require("codecompanion.complete").adapters()
    if #names == 0 then
      return M.chat(chat_opts) -- the host cannot say: it reports the name itself
    end
    check(names)
  end)
end

return M

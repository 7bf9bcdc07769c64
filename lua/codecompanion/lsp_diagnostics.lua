-- Fresh diagnostics: whether the language servers published for a buffer's current text, and
-- waiting (bounded) for their next publish after a change.
local M = {}

local SEVERITY = { ERROR = 1, WARNING = 2, INFORMATION = 3, HINT = 4 }
local NAMES = { "ERROR", "WARNING", "INFORMATION", "HINT" }
-- After a first publish, other servers attached to the buffer get this long to publish too.
local SETTLE_MS = 150

-- Per buffer: its changedtick when a language server last published for it.
local published = {} ---@type table<integer, integer>
-- Clients waited for that never published anything (a server that only completes, say): they
-- are not waited for again.
local silent = {} ---@type table<integer, boolean>
local tracking = false

--- Whether a DiagnosticChanged event came from a language server (an empty list may be one
--- clearing its diagnostics; other sources, such as a linter plugin, name their namespace).
---@param diagnostics vim.Diagnostic[]?
---@return boolean
local function from_lsp(diagnostics)
  if not diagnostics or #diagnostics == 0 then
    return true
  end
  for _, d in ipairs(diagnostics) do
    local ns = d.namespace and vim.diagnostic.get_namespace(d.namespace)
    if ns and type(ns.name) == "string" and ns.name:sub(1, 8) == "vim.lsp." then
      return true
    end
  end
  return false
end

--- Note a DiagnosticChanged event that came from a language server.
---@param args vim.api.keyset.create_autocmd.callback_args
local function note(args)
  if vim.api.nvim_buf_is_valid(args.buf) and from_lsp((args.data or {}).diagnostics) then
    published[args.buf] = vim.api.nvim_buf_get_changedtick(args.buf)
  end
end

--- Start noting each buffer's publishes (idempotent; the host calls it when it connects).
function M.track()
  if tracking then
    return
  end
  tracking = true
  local group = vim.api.nvim_create_augroup("codecompanion_lsp_diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", { group = group, callback = note })
  vim.api.nvim_create_autocmd("BufUnload", {
    group = group,
    callback = function(args)
      published[args.buf] = nil
    end,
  })
end

--- Whether the client has published diagnostics in this session (its namespace exists).
---@param client vim.lsp.Client
---@return boolean
local function has_published(client)
  local prefix = ("vim.lsp.%s.%d"):format(client.name, client.id)
  for name in pairs(vim.api.nvim_get_namespaces()) do
    if name == prefix or name:sub(1, #prefix + 1) == prefix .. "." then
      return true
    end
  end
  return false
end

--- The clients attached to `bufnr` worth waiting for.
---@param bufnr integer
---@return vim.lsp.Client[]
local function waitable(bufnr)
  local result = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if not silent[client.id] then
      table.insert(result, client)
    end
  end
  return result
end

--- Whether a language server is starting (not initialized yet): it may attach to a buffer
--- that was just loaded.
---@return boolean
local function starting()
  for _, client in ipairs(vim.lsp.get_clients()) do
    if not client.initialized and not client:is_stopped() then
      return true
    end
  end
  return false
end

--- Whether the last publish for `bufnr` came after its current text.
---@param bufnr integer
---@return boolean
function M.is_fresh(bufnr)
  local tick = published[bufnr]
  return tick ~= nil and tick >= vim.api.nvim_buf_get_changedtick(bufnr)
end

---@class codecompanion.Freshness
---@field fresh boolean the servers published for the current text
---@field servers string[] names of the servers attached
---@field timed_out boolean waited the whole bound without a publish

--- The names of the servers attached to `bufnr`.
---@param bufnr integer
---@return string[]
local function server_names(bufnr)
  local names = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    table.insert(names, client.name)
  end
  return names
end

--- The state of `bufnr` now, for `done`.
---@param bufnr integer
---@param timed_out boolean
---@return codecompanion.Freshness
local function state_of(bufnr, timed_out)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return { fresh = false, servers = {}, timed_out = timed_out }
  end
  return { fresh = M.is_fresh(bufnr), servers = server_names(bufnr), timed_out = timed_out }
end

--- Wait for the next publish of any of `clients` for `bufnr`, at most `wait_ms`.
---@param bufnr integer
---@param clients vim.lsp.Client[]
---@param wait_ms integer
---@param done fun(result: codecompanion.Freshness)
local function next_publish(bufnr, clients, wait_ms, done)
  local timer = assert(vim.uv.new_timer())
  local finished = false
  local id ---@type integer
  local function finish(timed_out)
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    pcall(vim.api.nvim_del_autocmd, id)
    if timed_out then
      for _, client in ipairs(clients) do
        silent[client.id] = silent[client.id] or not has_published(client)
      end
    end
    done(state_of(bufnr, timed_out))
  end
  id = vim.api.nvim_create_autocmd("DiagnosticChanged", {
    buffer = bufnr,
    callback = function(args)
      note(args) -- whichever of the two autocmds runs first
      if M.is_fresh(bufnr) then
        -- One server published; others attached get a moment to follow.
        vim.defer_fn(function()
          finish(false)
        end, #clients > 1 and SETTLE_MS or 0)
      end
    end,
  })
  timer:start(wait_ms, 0, function()
    vim.schedule(function()
      finish(true)
    end)
  end)
end

--- Call `done` once the servers attached to `bufnr` published for its current text, or after
--- `wait_ms` (none attached: at once). A server still starting gets `start_ms` to attach.
---@param bufnr integer
---@param wait_ms integer
---@param start_ms integer
---@param done fun(result: codecompanion.Freshness)
function M.wait(bufnr, wait_ms, start_ms, done)
  M.track()
  local clients = waitable(bufnr)
  if #clients == 0 and start_ms > 0 and starting() then
    M.after_attach(bufnr, start_ms, function()
      M.wait(bufnr, wait_ms, 0, done)
    end)
  elseif #clients == 0 or M.is_fresh(bufnr) or wait_ms <= 0 then
    done(state_of(bufnr, false))
  else
    next_publish(bufnr, clients, wait_ms, done)
  end
end

--- Call `done` once a language server attached to `bufnr`, or after `ms`.
---@param bufnr integer
---@param ms integer
---@param done fun()
function M.after_attach(bufnr, ms, done)
  local timer = assert(vim.uv.new_timer())
  local finished = false
  local id
  local function finish()
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    pcall(vim.api.nvim_del_autocmd, id)
    done()
  end
  id = vim.api.nvim_create_autocmd("LspAttach", {
    buffer = bufnr,
    callback = function()
      vim.schedule(finish)
    end,
  })
  timer:start(ms, 0, vim.schedule_wrap(finish))
end

---@class codecompanion.Diagnostic
---@field line integer 0-based
---@field col integer 0-based
---@field severity "ERROR"|"WARNING"|"INFORMATION"|"HINT"
---@field message string
---@field source string|vim.NIL
---@field code string|vim.NIL

--- The diagnostics of `bufnr` at `min_severity` or worse.
---@param bufnr integer
---@param min_severity? string ERROR, WARNING, INFORMATION or HINT (the default: all)
---@return codecompanion.Diagnostic[]
function M.collect(bufnr, min_severity)
  local limit = SEVERITY[min_severity or "HINT"] or 4
  local result = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.severity <= limit then
      table.insert(result, {
        line = d.lnum,
        col = d.col,
        severity = NAMES[d.severity] or "HINT",
        message = d.message,
        source = d.source or vim.NIL,
        code = d.code and tostring(d.code) or vim.NIL,
      })
    end
  end
  return result
end

---@class codecompanion.ServerSeen
---@field name string
---@field root string|vim.NIL
---@field buffers integer buffers it is attached to
---@field state "running"|"starting"|"stopped"
---@field diagnostics "published"|"none seen"|"silent"

--- The language servers Neovim runs, for :checkhealth.
---@return codecompanion.ServerSeen[]
function M.servers()
  local result = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    local state = client:is_stopped() and "stopped"
      or (client.initialized and "running" or "starting")
    local said = has_published(client) and "published"
      or (silent[client.id] and "silent" or "none seen")
    table.insert(result, {
      name = client.name,
      root = client.root_dir or vim.NIL,
      buffers = vim.tbl_count(client.attached_buffers or {}),
      state = state,
      diagnostics = said,
    })
  end
  return result
end

return M

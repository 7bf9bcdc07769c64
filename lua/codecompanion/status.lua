-- A chat's state for a statusline: what it waits on, and its adapter and model.
local chat_buffers = require("codecompanion.chat_buffers")
local render = require("codecompanion.render")

local M = {}

---@class codecompanion.StatusInfo
---@field state string what it waits on: "awaiting approval", "awaiting review",
---"running N tools", "streaming", "waiting", or "" when idle
---@field running integer tools running now
---@field adapter? string
---@field model? string
---@field yolo boolean YOLO mode is on
---@field approvals integer "always" approvals the chat remembers
---@field tokens? integer tokens in the model's context (the next request, estimated)
---@field window? integer the model's context window
---@field last_input? integer input tokens of the last request
---@field last_output? integer output tokens of the last request
---@field cost? number USD spent in this chat, when the model's price is known
---@field mode? string the permission mode: "ask", "edits", "sandboxed" or "yolo"
---@field sandbox? string what confines its commands: "landlock", "seatbelt" or "none"
---@field narrowed? string why commands may not write the chat's folder (it is no project)

--- What a chat waits on: the words of `StatusInfo.state`.
---@param bufnr integer
---@param id string
---@param running integer
---@param awaiting boolean
---@return string
local function state_of(bufnr, id, running, awaiting)
  if awaiting then
    return "awaiting approval"
  elseif require("codecompanion.editor").reviewing(id) then
    return "awaiting review"
  elseif running > 0 then
    return ("running %d tool%s"):format(running, running == 1 and "" or "s")
  elseif require("codecompanion.stream_highlight").is_streaming(bufnr) then
    return "streaming"
  elseif not vim.bo[bufnr].modifiable then
    return "waiting"
  end
  return ""
end

--- The chat's state for a statusline (default: the last chat), or nil when it is no open chat.
---@param bufnr? integer
---@return codecompanion.StatusInfo?
function M.info(bufnr)
  bufnr = bufnr or chat_buffers.last_chat()
  local id = bufnr and chat_buffers.chat_id(bufnr)
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
  local meter = require("codecompanion.meter").get(bufnr) or {}
  return {
    state = state_of(bufnr, id, running, awaiting),
    running = running,
    adapter = s.adapter,
    model = s.model,
    yolo = vim.b[bufnr].codecompanion_yolo == true,
    approvals = tonumber(vim.b[bufnr].codecompanion_approvals) or 0,
    tokens = meter.tokens,
    window = meter.window,
    last_input = meter.last_input,
    last_output = meter.last_output,
    cost = meter.cost,
    mode = vim.b[bufnr].codecompanion_mode,
    sandbox = vim.b[bufnr].codecompanion_sandbox,
    narrowed = vim.b[bufnr].codecompanion_narrowed ~= "" and vim.b[bufnr].codecompanion_narrowed
      or nil,
  }
end

--- One short string for a statusline: e.g. "running 2 tools · sandboxed (landlock) · openai ·
--- gpt-4.1" ("" for none): the permission mode with what confines commands ("YOLO (landlock)"
--- in YOLO mode), and "2 approved" when the chat remembers "always" approvals.
---@param bufnr? integer
---@return string
function M.line(bufnr)
  local info = M.info(bufnr)
  if not info then
    return ""
  end
  local parts = {}
  -- The sandbox is known once the host's probe has answered, a moment after the chat opens.
  local sandbox = info.sandbox
      and (" (%s%s)"):format(info.sandbox, info.narrowed and ", not a project" or "")
    or ""
  local mode = info.mode and (info.mode .. sandbox) or ""
  if info.yolo then
    mode = "YOLO" .. sandbox
  end
  local approved = info.approvals > 0 and ("%d approved"):format(info.approvals) or nil
  local context = ""
  if info.tokens and info.window then
    context = ("%d%%%% of %dk"):format(
      math.floor(100 * info.tokens / info.window + 0.5),
      math.floor(info.window / 1000 + 0.5)
    )
  end
  local shown = { info.state, mode, approved or "", info.adapter, info.model, context }
  for _, part in ipairs(shown) do
    if part and part ~= "" then
      table.insert(parts, part)
    end
  end
  return table.concat(parts, " · ")
end

return M

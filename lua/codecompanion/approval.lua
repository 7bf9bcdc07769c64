-- Approval prompts through vim.ui.select (so dressing, snacks, telescope and fzf-lua UIs work).
-- Every answer goes back with rpcnotify; nothing here blocks Neovim.
local M = {}

local LABELS = {
  approve = "Approve",
  always = "Always approve (this tool, this chat)",
  always_command = "Always approve this exact command (this chat)",
  always_arguments = "Always approve these exact arguments (this chat)",
  approve_all = "Approve all pending questions (diff reviews are still shown)",
  reject = "Reject",
  never = "Always reject (this chat)",
  cancel = "Cancel (reject this and all queued calls)",
  edit = "Edit the arguments, then run",
}

---@class codecompanion.ApprovalRequest a question about one tool call, asked by the host
---@field tool_name string
---@field prompt string
---@field choices? string[] keys of LABELS (default: approve, always, reject, cancel, edit)
---@field preview? string[] every argument, shown in a float above the question
---@field always_scope? "command"|"arguments" what "always" remembers, when not the whole tool
---@field editable_text? string the arguments (JSON) or the command, for "edit"
---@field editable_kind? "json"|"text"

-- Edit buffers and argument previews open for a pending approval, closed when it is stopped.
local open_edits = {}
local open_previews = {}

---@param chan integer
---@param rid integer
---@param choice? string approve, always, reject, cancel, edit, ...
---@param extra? { reason?: string, edited?: string }
local function reply(chan, rid, choice, extra)
  pcall(vim.rpcnotify, chan, "codecompanion", "approval_reply", {
    rid = rid,
    choice = choice or "cancel",
    reason = extra and extra.reason or vim.NIL,
    edited = extra and extra.edited or vim.NIL,
  })
end

--- A scratch buffer of the call's editable text (JSON arguments, or a command), in a split.
---@param rid integer
---@param req codecompanion.ApprovalRequest
---@return integer buf
local function edit_buffer(rid, req)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  pcall(vim.api.nvim_buf_set_name, buf, ("codecompanion://edit/%s"):format(rid))
  local text = vim.split(req.editable_text or "", "\n", { plain = true })
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text)
  vim.bo[buf].filetype = req.editable_kind == "json" and "json" or "sh"
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

--- Open a scratch buffer holding the call's text; `:w` (or <C-s>) runs the edited call, `q`
--- goes back.
---@param chan integer
---@param rid integer
---@param req codecompanion.ApprovalRequest
local function edit(chan, rid, req)
  local origin = vim.api.nvim_get_current_win()
  local buf = edit_buffer(rid, req)
  open_edits[buf] = true
  local done = false
  local function finish(choice, edited)
    if done then
      return
    end
    done = true
    open_edits[buf] = nil
    reply(chan, rid, choice, { edited = edited })
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(buf) then
        pcall(vim.api.nvim_buf_delete, buf, { force = true })
      end
      -- Back where the user was (the chat), not wherever closing the split leaves the cursor.
      require("codecompanion.preview").refocus(origin)
    end)
  end
  local function submit()
    vim.bo[buf].modified = false
    finish("edit", table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
  end
  vim.api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = submit })
  vim.keymap.set({ "n", "i" }, "<C-s>", submit, { buffer = buf })
  vim.keymap.set("n", "q", function()
    finish("reject", nil)
  end, { buffer = buf, nowait = true })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      finish("reject", nil)
    end,
  })
  -- Said in the window, not the message area: it stays visible while the user edits.
  vim.wo.winbar = "%#CodeCompanionWinbar#codecompanion: edit, then :w to run (q to reject)"
end

--- The label of a choice; "always" says what it remembers (a tool, or one command or path).
---@param item string a choice
---@param req? codecompanion.ApprovalRequest
---@return string
function M.label(item, req)
  if item == "always" and req and type(req.always_scope) == "string" then
    return LABELS["always_" .. req.always_scope] or LABELS.always
  end
  return LABELS[item] or item
end

--- Ask the user about one tool call (called by the host): every argument is on screen
--- (in a preview at the top) while the question is asked.
---@param chan integer
---@param rid integer
---@param req codecompanion.ApprovalRequest
function M.ask(chan, rid, req)
  vim.schedule(function()
    -- User CodeCompanionToolApprovalRequested/Finished are fired by the host (approvals.py),
    -- once per question, in order with the chat's rendering: not here.
    local choices = req.choices or { "approve", "always", "reject", "cancel", "edit" }
    local preview = require("codecompanion.preview")
    local view = nil
    if type(req.preview) == "table" and #req.preview > 0 then
      view =
        preview.open(req.preview, { title = "Tool call: " .. req.tool_name, choices = #choices })
      open_previews[rid] = view
    end
    preview.select(choices, {
      prompt = view and preview.one_row(req.prompt) or req.prompt,
      kind = "codecompanion.approval",
      format_item = function(item)
        return M.label(item, req)
      end,
    }, function(choice)
      open_previews[rid] = nil
      preview.close(view)
      if choice == "reject" then
        vim.ui.input({ prompt = "Reason for rejecting (optional): " }, function(reason)
          reply(chan, rid, "reject", { reason = reason ~= "" and reason or nil })
        end)
      elseif choice == "edit" then
        edit(chan, rid, req)
      else
        reply(chan, rid, choice or "cancel")
      end
    end)
  end)
end

--- The request was stopped: close any edit buffer still open for it, and ask no question put
--- aside for an Ex command again.
function M.dismiss()
  require("codecompanion.preview").drop_questions()
  for rid, view in pairs(open_previews) do
    open_previews[rid] = nil
    require("codecompanion.preview").close(view)
  end
  for buf, _ in pairs(open_edits) do
    open_edits[buf] = nil
    if vim.api.nvim_buf_is_valid(buf) then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
end

--- A yes/no question (e.g. a path outside the project).
---@param chan integer
---@param rid integer
---@param question string
function M.confirm(chan, rid, question)
  vim.schedule(function()
    require("codecompanion.preview").select(
      { "Yes", "No" },
      { prompt = question, kind = "codecompanion.confirm" },
      function(choice)
        reply(chan, rid, choice == "Yes" and "approve" or "reject")
      end
    )
  end)
end

return M

-- Approval prompts through vim.ui.select (so dressing, snacks, telescope and fzf-lua UIs work).
-- Every answer goes back with rpcnotify; nothing here blocks Neovim.
local M = {}

local LABELS = {
  approve = "Approve",
  always = "Always approve (this tool, this chat)",
  approve_all = "Approve all pending",
  reject = "Reject",
  cancel = "Cancel (reject this and all queued calls)",
  edit = "Edit the arguments, then run",
}

-- Edit buffers open for a pending approval, closed when the request is stopped.
local open_edits = {}

local function reply(chan, rid, choice, extra)
  pcall(vim.rpcnotify, chan, "codecompanion", "approval_reply", {
    rid = rid,
    choice = choice or "cancel",
    reason = extra and extra.reason or vim.NIL,
    edited = extra and extra.edited or vim.NIL,
  })
end

--- Open a scratch buffer holding `text`; `:w` (or <C-s>) runs the edited call, `q` goes back.
local function edit(chan, rid, req)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  pcall(vim.api.nvim_buf_set_name, buf, ("codecompanion://edit/%s"):format(rid))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(req.editable_text or "", "\n", { plain = true }))
  vim.bo[buf].filetype = req.editable_kind == "json" and "json" or "sh"
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
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
  vim.notify("codecompanion: edit, then :w to run (q to reject)", vim.log.levels.INFO)
end

--- Ask the user about one tool call (called by the host).
function M.ask(chan, rid, req)
  vim.schedule(function()
    -- User CodeCompanionToolApprovalRequested/Finished are fired by the host (approvals.py),
    -- once per question, in order with the chat's rendering: not here.
    local choices = req.choices or { "approve", "always", "reject", "cancel", "edit" }
    vim.ui.select(choices, {
      prompt = req.prompt,
      kind = "codecompanion.approval",
      format_item = function(item)
        return LABELS[item] or item
      end,
    }, function(choice)
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

--- The request was stopped: close any edit buffer still open for it.
function M.dismiss()
  for buf, _ in pairs(open_edits) do
    open_edits[buf] = nil
    if vim.api.nvim_buf_is_valid(buf) then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
end

--- A yes/no question (e.g. a path outside the project).
function M.confirm(chan, rid, question)
  vim.schedule(function()
    vim.ui.select({ "Yes", "No" }, { prompt = question, kind = "codecompanion.confirm" }, function(choice)
      reply(chan, rid, choice == "Yes" and "approve" or "reject")
    end)
  end)
end

return M

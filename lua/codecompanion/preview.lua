-- What a question is about, on screen before the question is asked: a float at the top of the
-- editor that leaves the bottom rows free for the prompt (the stock vim.ui.select prints its
-- list there, over the windows). The float never takes focus, so the layout and the cursor are
-- as they were once it closes.
local M = {}

local ns = vim.api.nvim_create_namespace("codecompanion_preview")

---@class codecompanion.Preview
---@field buf integer
---@field win integer

---@class codecompanion.PreviewOpts
---@field title? string
---@field filetype? string
---@field choices? integer how many choices the question below it lists (they need the rows)
---@field highlights? table<integer, string> 1-based row -> highlight group

-- Rows the stock prompt needs: its question, one row per choice, the "Type number" row and
-- the separator above the message area.
---@param choices integer
---@return integer
local function free_rows(choices)
  return choices + 3
end

--- Open a preview of `lines`; opts: title, filetype, choices (count), highlights (row -> group).
---@param lines string[]
---@param opts? codecompanion.PreviewOpts
---@return codecompanion.Preview
function M.open(lines, opts)
  opts = opts or {}
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  if opts.filetype then
    vim.bo[buf].filetype = opts.filetype
  end
  for row, group in pairs(opts.highlights or {}) do
    vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { line_hl_group = group, priority = 50 })
  end
  vim.bo[buf].modifiable = false
  local room = vim.o.lines - vim.o.cmdheight - free_rows(opts.choices or 3) - 2
  local width = math.max(20, vim.o.columns - 2)
  local rows = 0 -- lines wrap in the float: count screen rows, not lines
  for _, line in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.api.nvim_strwidth(line) / width))
  end
  local win = vim.api.nvim_open_win(buf, false, {
    relative = "editor",
    row = 0,
    col = 0,
    width = width,
    height = math.max(1, math.min(room, rows)),
    border = "rounded",
    title = opts.title and (" " .. opts.title .. " ") or nil,
    title_pos = opts.title and "center" or nil,
    style = "minimal",
    focusable = true,
    zindex = 45, -- below pickers (50), so a floating picker is never hidden by it
  })
  vim.wo[win].wrap = true
  vim.wo[win].winhighlight =
    "NormalFloat:CodeCompanionPreview,FloatBorder:CodeCompanionPreviewBorder"
  return { buf = buf, win = win }
end

--- Put 1-based `row` of the preview at its top and draw the screen now.
---@param preview codecompanion.Preview
---@param row integer
---@param title? string a new title
function M.show(preview, row, title)
  if not vim.api.nvim_win_is_valid(preview.win) then
    return
  end
  pcall(vim.api.nvim_win_set_cursor, preview.win, { row, 0 })
  vim.api.nvim_win_call(preview.win, function()
    vim.cmd("normal! zt")
  end)
  if title then
    pcall(
      vim.api.nvim_win_set_config,
      preview.win,
      { title = " " .. title .. " ", title_pos = "center" }
    )
  end
  vim.cmd("redraw")
end

--- Close the preview (nothing when it is nil or already closed).
---@param preview? codecompanion.Preview
function M.close(preview)
  if preview and vim.api.nvim_win_is_valid(preview.win) then
    pcall(vim.api.nvim_win_close, preview.win, true)
  end
end

--- A prompt that fits on one row (what it is about is in the preview above it).
---@param prompt string
---@return string
function M.one_row(prompt)
  local room = vim.o.columns - 2
  if vim.api.nvim_strwidth(prompt) <= room then
    return prompt
  end
  return vim.fn.strcharpart(prompt, 0, room - 1) .. "…"
end

--- True when vim.ui.select is Neovim's own (a numbered list in the message area).
---@return boolean
function M.stock_select()
  local info = debug.getinfo(vim.ui.select, "S")
  return info ~= nil and info.source:find("vim/ui.lua", 1, true) ~= nil
end

-- Questions put aside while an Ex command typed at them runs (asked again after it), by id.
local waiting = { next = 0 }

--- Run the Ex command typed at a question (`keys`, from its `:`), then ask the question again.
---@param question table { items, opts, on_choice }
---@param keys string
local function put_aside(question, keys)
  waiting.next = waiting.next + 1
  local id = waiting.next
  waiting[id] = question
  -- The command line may go on after the keys the prompt took (it ends at `q`): the question
  -- comes back once that command line is left, its command has run and Neovim waits for keys
  -- again (SafeState), so never during `:qa`.
  vim.api.nvim_create_autocmd("CmdlineLeave", {
    once = true,
    callback = function()
      vim.api.nvim_create_autocmd("SafeState", {
        once = true,
        callback = function()
          M.ask_again(id)
        end,
      })
    end,
  })
  -- Neovim quitting (`:qa`) answers it as the prompt would have: cancelled.
  vim.api.nvim_create_autocmd("VimLeavePre", {
    once = true,
    callback = function()
      local left = waiting[id]
      waiting[id] = nil
      if left then
        left[3](nil)
      end
    end,
  })
  vim.api.nvim_feedkeys(keys, "ni", false)
end

--- Ask with vim.ui.select once the preview is drawn (stock select blocks the screen at once).
--- The stock select leaves its list in the message area: it is cleared before the answer is
--- handled, so a message that follows is one line, not a "Press ENTER" prompt.
---@param items any[]
---@param opts table vim.ui.select's options
---@param on_choice fun(item: any?, index: integer?)
function M.select(items, opts, on_choice)
  vim.cmd("redraw")
  vim.schedule(function()
    -- The stock prompt (inputlist) ignores `:` and cancels on `q`: an Ex command typed at it
    -- (`:ls`, `:qa`) would cancel the question and its rest would land in the chat as keys.
    -- The keys typed while it asks tell: a cancel that began with `:` runs that command, and
    -- then the same question is asked again (what it is about still waits for an answer).
    local keys = vim.api.nvim_create_namespace("codecompanion_select_keys")
    local typed_keys = {}
    if M.stock_select() then -- a picker of its own reads `:` itself
      vim.on_key(function(key, typed)
        table.insert(typed_keys, (typed and typed ~= "") and typed or key)
      end, keys)
    end
    vim.ui.select(items, opts, function(choice, ...)
      vim.on_key(nil, keys)
      vim.cmd("redraw")
      if choice == nil and typed_keys[1] == ":" then
        return put_aside({ items, opts, on_choice }, table.concat(typed_keys))
      end
      on_choice(choice, ...)
    end)
  end)
end

--- Ask question `id` again, after the Ex command typed at it ran (nothing once it was dropped).
---@param id integer
function M.ask_again(id)
  local question = waiting[id]
  waiting[id] = nil
  if question and vim.v.exiting == vim.NIL then
    M.select(question[1], question[2], question[3])
  end
end

--- Forget the questions put aside for an Ex command (their request was stopped).
function M.drop_questions()
  for id in pairs(waiting) do
    if id ~= "next" then
      waiting[id] = nil
    end
  end
end

--- Focus `win` again if it still exists (a picker or a split may have moved it).
---@param win? integer
function M.refocus(win)
  if win and vim.api.nvim_win_is_valid(win) and vim.api.nvim_get_current_win() ~= win then
    pcall(vim.api.nvim_set_current_win, win)
  end
end

return M

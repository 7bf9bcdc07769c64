-- The messages Lua sends the host, as LuaCATS classes (annotations only, no code).
--
-- `host.notify(name, fields)` (or `rpcnotify(chan, "codecompanion", name, fields)`) sends one;
-- `host.request(name, fields)` asks one of the last three. Each `codecompanion.msg.<name>` names
-- the fields of the frozen value the host decodes it into (rplugin/python3/codecompanion/nvim/
-- messages.py); tests/nvim/test_message_protocol.py fails when the two sides differ, or when a
-- call sends a message without its class or a field its class does not name. A chat's messages
-- get `id` from `send()` in chat.lua and checkpoints.lua.

--- The host's channel is open: setup()'s options (`config.for_python()`).
---@class codecompanion.msg.hello
---@field channel? integer
---@field options? table

--- A question Lua waits on: `method` with `args`, answered by `host.reply(rid, value)`.
---@class codecompanion.msg.request
---@field rid? integer
---@field method? string
---@field args? table

--- `:CodeCompanion reload`: read the config file again.
---@class codecompanion.msg.reload

--- Follow mode turned on or off.
---@class codecompanion.msg.follow
---@field on? boolean

--- The files loaded in buffers now, and whether a language server has attached to one.
---@class codecompanion.msg.buffers
---@field paths? string[]
---@field servers? boolean

--- Neovim wrote a file: its size and modification time.
---@class codecompanion.msg.file_saved
---@field path string
---@field size integer
---@field sec integer
---@field nsec integer

--- `:CodeCompanionChat Checks` in the folder `cwd`.
---@class codecompanion.msg.checks
---@field cwd? string

--- `:CodeCompanionChat Restore`: pick a saved chat.
---@class codecompanion.msg.pick_restore

--- `:CodeCompanionChat Resume`: an agent's earlier session (the agent named, or the last chat's).
---@class codecompanion.msg.pick_agent_session
---@field adapter? string
---@field id? string
---@field cwd? string

--- The user's answer to an approval question `rid`.
---@class codecompanion.msg.approval_reply
---@field rid? integer
---@field choice? string
---@field reason? string
---@field edited? string

--- Lua's answer to the host's request `rid`: any value the request's reader checks.
---@class codecompanion.msg.editor_reply
---@field rid? integer
---@field value any

--- Open a chat for buffer `bufnr`: new, restored from disk, or reattached after a restart.
---@class codecompanion.msg.chat_new
---@field id? string
---@field bufnr integer
---@field cwd? string
---@field adapter? string
---@field model? string
---@field restore? boolean
---@field reattach? boolean
---@field session? string
---@field yolo? boolean

--- The chat's buffer was shown again.
---@class codecompanion.msg.chat_opened
---@field id? string

--- The chat's buffer was wiped.
---@class codecompanion.msg.chat_close
---@field id? string

--- Clear the chat (under `new_id` from now on, when given).
---@class codecompanion.msg.chat_clear
---@field id? string
---@field new_id? string

--- The text under `## Me` and its context items (`context/sources.py` reads them).
---@class codecompanion.msg.chat_submit
---@field id? string
---@field text? string
---@field context any

--- Ask for the last answer again.
---@class codecompanion.msg.chat_regenerate
---@field id? string

--- `/compact`: summarise the earlier conversation now.
---@class codecompanion.msg.chat_compact
---@field id? string

--- Stop what the chat runs (`quiet`: say nothing when nothing runs).
---@class codecompanion.msg.chat_stop
---@field id? string
---@field quiet? boolean

--- Turn YOLO on or off.
---@class codecompanion.msg.chat_yolo
---@field id? string

--- Forget the "always" approvals, YOLO off.
---@class codecompanion.msg.chat_forget_approvals
---@field id? string

--- The permission mode: a name, or "next".
---@class codecompanion.msg.chat_mode
---@field id? string
---@field mode? string

--- Pick the chat's adapter and model.
---@class codecompanion.msg.chat_pick_adapter
---@field id? string

--- `/rules`: turn a rules file off or on.
---@class codecompanion.msg.chat_rules
---@field id? string

--- `/skills`: turn a skill off or on.
---@class codecompanion.msg.chat_skills
---@field id? string

--- A tool's whole output (the call under the cursor).
---@class codecompanion.msg.chat_full_output
---@field id? string
---@field call_id? string

--- `/fetch`: a page for the message being written in buffer `bufnr`.
---@class codecompanion.msg.slash_fetch
---@field id? string
---@field bufnr? integer
---@field url? string

--- The external agent's mode, picked.
---@class codecompanion.msg.chat_agent_mode
---@field id? string
---@field mode? string

--- One of the external agent's options, picked (its value a choice's id or a switch).
---@class codecompanion.msg.chat_agent_option
---@field id? string
---@field option? string
---@field value? string|boolean

--- Pick a turn to rewind to.
---@class codecompanion.msg.chat_pick_rewind
---@field id? string

--- Rewind to just before `turn`: the code, the conversation, or both.
---@class codecompanion.msg.chat_rewind
---@field id? string
---@field turn? integer
---@field code? boolean
---@field conversation? boolean

--- Undo the last rewind or revert.
---@class codecompanion.msg.chat_rewind_undo
---@field id? string

--- The files the chat changed since `since_turn` (all of them when unset).
---@class codecompanion.msg.chat_review
---@field id? string
---@field since_turn? integer

--- Revert one file of the review (one hunk when `hunk`, counted from 0).
---@class codecompanion.msg.chat_review_revert
---@field id? string
---@field since_turn? integer
---@field path? string
---@field hunk? integer

--- Request: the `@{…}` items, adapter names and models completion offers.
---@class codecompanion.msg.completion_items

--- Request: `:checkhealth`'s report for the folder `cwd`.
---@class codecompanion.msg.health
---@field cwd? string

--- Request: what `changes()` returns (the chat's changed files since `since_turn`).
---@class codecompanion.msg.changes
---@field id? string
---@field since_turn? integer

return {}

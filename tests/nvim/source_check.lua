-- Reads the plugin's Lua with Neovim's own Lua parser (treesitter) and prints, as JSON, what
-- breaks the house rules: functions over MAX_LINES lines, and public functions (those of the
-- table a module returns) without LuaCATS annotations for their description, every parameter
-- and, when they return a value, the return. Run: nvim --headless -l source_check.lua FILE...
-- (tests/nvim/test_lua_source.py runs it on the plugin's Lua).
local MAX_LINES = 50

---@param node TSNode
---@param src string
---@return string
local function text(node, src)
  return vim.treesitter.get_node_text(node, src)
end

--- The name of the table a module returns (`return M` at its end), or nil.
---@param root TSNode
---@param src string
---@return string?
local function returned_table(root, src)
  for i = root:named_child_count() - 1, 0, -1 do
    local child = root:named_child(i)
    if child and child:type() == "return_statement" then
      local list = child:named_child(0)
      local value = list and list:named_child(0)
      if value and value:type() == "identifier" then
        return text(value, src)
      end
      return nil
    end
  end
  return nil
end

--- True when `body` returns a value itself (not from a function nested in it).
---@param node TSNode
---@return boolean
local function returns_value(node)
  for child in node:iter_children() do
    local kind = child:type()
    if kind == "return_statement" and child:named_child_count() > 0 then
      return true
    end
    if kind ~= "function_definition" and kind ~= "function_declaration" then
      if returns_value(child) then
        return true
      end
    end
  end
  return false
end

--- The `---` comment lines right above row `row` (0-based), nearest last.
---@param lines string[]
---@param row integer
---@return string[]
local function doc_above(lines, row)
  local doc = {}
  local i = row -- lines is 1-based: lines[row] is the line above the 0-based `row`
  while i >= 1 and lines[i]:match("^%s*%-%-%-") do
    table.insert(doc, 1, lines[i])
    i = i - 1
  end
  return doc
end

--- What the annotations above a public function miss.
---@param doc string[]
---@param params string[]
---@param returns boolean
---@return string[]
local function missing_annotations(doc, params, returns)
  local missing = {}
  local described, annotated, has_return = false, {}, false
  for _, line in ipairs(doc) do
    local tag, rest = line:match("^%s*%-%-%-%s*@(%w+)%s*(.*)$")
    if not tag then
      described = described or line:match("^%s*%-%-%-%s*%S") ~= nil
    elseif tag == "param" then
      annotated[rest:match("^([%w_%.]+)")] = true
    elseif tag == "return" then
      has_return = true
    end
  end
  if not described then
    table.insert(missing, "a description")
  end
  for _, name in ipairs(params) do
    if not annotated[name] then
      table.insert(missing, "@param " .. name)
    end
  end
  if returns and not has_return then
    table.insert(missing, "@return")
  end
  return missing
end

---@param file string
---@return table[]
local function check(file)
  local src = table.concat(vim.fn.readfile(file), "\n")
  local lines = vim.split(src, "\n", { plain = true })
  local root = vim.treesitter.get_string_parser(src, "lua"):parse()[1]:root()
  local module = returned_table(root, src)
  local problems = {}
  local query =
    vim.treesitter.query.parse("lua", "(function_declaration) @f (function_definition) @f")
  for _, node in query:iter_captures(root, src) do
    local first, _, last = node:range()
    local name_node = node:field("name")[1]
    local name = name_node and text(name_node, src) or "function"
    if last - first + 1 > MAX_LINES then
      table.insert(problems, {
        file = file,
        line = first + 1,
        name = name,
        problem = ("%d lines (at most %d)"):format(last - first + 1, MAX_LINES),
      })
    end
    local public = module
      and name_node
      and (name:match("^" .. module .. "%.[%w_]+$") or name:match("^" .. module .. ":[%w_]+$"))
    if public then
      local params = {}
      local plist = node:field("parameters")[1]
      for param in plist:iter_children() do
        if param:named() then
          table.insert(params, text(param, src))
        end
      end
      local body = node:field("body")[1]
      local missing =
        missing_annotations(doc_above(lines, first), params, body ~= nil and returns_value(body))
      if #missing > 0 then
        table.insert(problems, {
          file = file,
          line = first + 1,
          name = name,
          problem = "missing LuaCATS " .. table.concat(missing, ", "),
        })
      end
    end
  end
  return problems
end

local all = {}
for _, file in ipairs(_G.arg) do
  vim.list_extend(all, check(file))
end
io.stdout:write(vim.json.encode(all), "\n")

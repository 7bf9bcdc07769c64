local M = {}

function M.calc_total(items)
  local sum = 0
  for _, item in ipairs(items) do
    sum = sum + item.price * item.qty
  end
  return sum
end

return M

# Solved when no calc_total is left and the program still prints the same totals.
! grep -rn "calc_total" --include=*.lua . || exit 1
grep -q "function M.order_total" lua/shop/cart.lua || exit 1
if command -v lua >/dev/null; then
  out=$(lua main.lua 2>&1) || { echo "$out"; exit 1; }
  grep -Eq '^8(\.0)?$' <<<"$out" && grep -q "Total: 8.00" <<<"$out" || { echo "$out"; exit 1; }
fi

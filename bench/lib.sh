# Shared by the bench scripts (sourced): the statistics of timed runs.

# median and best of the numbers on stdin (one per line); 0 counts as 0.01 s
median() { sort -n | awk '{ t[NR] = ($1 > 0 ? $1 : 0.01) } END { print t[int((NR + 1) / 2)] }'; }
best() { sort -n | awk 'NR == 1 { print ($1 > 0 ? $1 : 0.01) }'; }

# ratios A B: for each round i, B[i] / A[i] (A and B: times, one per round, space-separated),
# one per line: how many times as fast A ran as B in that round.
ratios() {
  local -a a=(${1}) b=(${2}); local i
  for ((i = 0; i < ${#a[@]}; i++)); do awk -v x="${a[i]}" -v y="${b[i]}" 'BEGIN { print (x > 0 ? y / x : 1) }'; done
}

# ratio_of A B: the median of ratios A B. The machine's speed drifts over minutes, so two
# lines are compared round by round (a few seconds apart), never by their own medians.
ratio_of() { ratios "$1" "$2" | median; }

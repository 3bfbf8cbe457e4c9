package stack

// MaxTimeoutMinutes is the longest timeout heat_stack accepts: 30 days.
const MaxTimeoutMinutes = 43200

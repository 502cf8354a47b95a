// Package livecheck holds analyze's threshold checks as record watches
// them live (record --snapshot --snapshot-on): the limits and their channel
// patterns, how a check judges a value and words the result, what a
// channel's samples look like from the stamps the recorder stored, and
// Watch, which evaluates triggers record by record in bounded memory.
// The analyzer's offline checks use the same limits and words; the
// recorder imports this package, not the analyzer and its renderers.
package livecheck

// Package filexfer moves a recorder's finished logs to a collector over
// zenoh: the file plane of a recorder run as a service (fleet capture).
//
// The recorder's side (Serve) answers two queries under its name:
//
//	vrlog/record/NAME/files   the finished logs of its output directory:
//	                          name, size, SHA-256, whether it was recovered
//	vrlog/record/NAME/file    a byte range of one of them
//	                          {"file","sha256","offset","length"} -> the bytes
//
// and declares a liveliness token on vrlog/record/NAME/files (Discover).
// Only regular files directly in the output directory are served, opened
// through an os.Root of it, and only finished ones: a log a recorder still
// writes (it holds the file's lock) is listed as pending; a log a crash
// left without its footer is recovered once into a verified copy next to
// it (NAME.recovered.vrlog, its header marked logfmt.MetaRecoveredFrom), which
// is served in its place. A request is a parser's input: a bounded JSON
// object with known fields, a plain file name, a checksum that names the
// version listed; a query addressed by a wildcard is refused (zenoh's
// access control rules match a query's key expression, and one on ** is
// not covered by a rule on vrlog/record/**). Errors are answered as data
// (RemoteError, application/json;vrlog.record.error). Who may ask is not
// decided here: zenoh's access control on the router decides it before
// any query arrives (docs/deployment.md, "Access control").
//
// The collector's side (Client) lists and fetches: Window requests of
// Chunk bytes in flight per file (a 20 ms round trip is not the limit),
// written in order to a partial file next to the destination and hashed as
// they come, so memory is Window × Chunk whatever the file's size; an
// unanswered request is asked again until Patience runs out; the partial
// file (locked while written, so two collectors of one file take turns)
// survives an interrupted fetch and the next one resumes from its end; a
// complete file whose size and SHA-256 match the listing is synced and
// renamed into place. Collect does it for several recorders at once, into a
// folder per recorder, and links instead of copying a file that a shared
// directory already holds.
package filexfer

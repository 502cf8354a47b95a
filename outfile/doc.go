// Package outfile writes every file a vrlog tool produces (logs, MCAP,
// CSV, HTML, JUnit, JSON) and its standard output by one rule, so an
// output is complete or absent and nothing around it is broken:
//
//   - a new or regular file is written to a temporary name next to it
//     (.NAME.tmp-*), created with mode 0666 &^ umask like any file a shell
//     creates, and committed: flushed, fsynced, closed, read back when the
//     caller gives a check (CommitChecked), then moved to its name and the
//     directory fsynced. Without Force the move links the name, so a file
//     that appeared meanwhile is never replaced; with Force it renames over
//     the old file (a new inode: a reader of the old one keeps reading it);
//   - a symbolic link is followed: the temporary file goes next to the
//     link's final target, which is replaced; the link stays;
//   - an existing character device, FIFO or socket is written in place,
//     never renamed over and never needing Force (/dev/null, a pipe read by
//     another tool); a block device is written in place only with Force.
//     Such an output cannot be read back, and is synced only if the device
//     supports it; a write error (ENOSPC on a full device) is still the
//     output's error;
//   - a name of an open descriptor (/dev/stdout, /dev/fd/N) is written in
//     place, whatever it is open on (a file a shell redirected it to);
//   - "-" is standard output (Options.Stdout) for an output that streams;
//   - Abort, or Discard when the process is interrupted, removes a
//     temporary file (and a directory the output created), so nothing
//     half-written is left;
//   - a log read while it is written (CreateLive: record's log, sim --log)
//     is made under its name at once, as a new inode that holds an
//     exclusive flock(2) while it is written: a second writer is refused
//     with the holder's PID (LockedError), Force or not, and a reader can
//     tell a live file (Holder);
//   - standard output is buffered, its first write error kept, and it is
//     flushed and fsynced (when it is a file) at the end (Stream).
//
// outfile imports nothing of vrlog's: logfmt, the recorder and the verbs
// all commit their files through it.
package outfile

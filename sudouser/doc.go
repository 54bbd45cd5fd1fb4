// Package sudouser gives the files and directories tsolab writes to the
// user who ran it through sudo. Its one rule: when tsolab runs as root,
// SUDO_UID and SUDO_GID name a user other than root, and that user owns
// the directory a file or directory is made in, the new file or
// directory is theirs; otherwise it stays as made (root's under plain
// root, or under sudo in a directory root owns). So after `sudo tsolab
// test -json r.json -capture caps LAB` in a user's checkout, the user can
// read, copy, clean or remove what tsolab wrote as themselves.
//
// It owns that rule and nothing else: callers (the state directory in
// package planner, the CLI's -out, -json, -junit, -report, -summary and
// -capture files, fmt's rewrites, calibration files, profiles) decide
// what they write and call Give, GiveFile or MkdirAll for it.
package sudouser

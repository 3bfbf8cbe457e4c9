package workdir

// Restored is restored-from.json: the record of the backup a restore
// unpacked into this working dir (ours; its format is package backup's).
// A restore of the same backup into it again finds it and does nothing.
func (l Layout) Restored() string { return l.path("restored-from.json") }

// Deployed says whether the working dir holds a deployment of its stack:
// the passwords file or the deployment status a deploy writes.
func (l Layout) Deployed() bool {
	for _, p := range []string{l.Passwords(), l.Status()} {
		if _, err := readFile(p, "working dir file"); err == nil {
			return true
		}
	}
	return false
}

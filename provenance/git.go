package provenance

import (
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/tsolab/tsolab/result"
)

// gitOf returns the commit of the work tree holding dir and whether
// dir's files differ from it; nil when dir is in no git work tree (or
// the repository cannot be read, which provenance reports as absence).
func gitOf(dir string) *result.Git {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil
	}
	head, err := repo.Head()
	if err != nil {
		return nil
	}
	g := &result.Git{Commit: head.Hash().String()}
	wt, err := repo.Worktree()
	if err != nil {
		return g
	}
	rel, err := filepath.Rel(wt.Filesystem.Root(), abs)
	if err != nil {
		return g
	}
	st, err := wt.Status()
	if err != nil {
		return g
	}
	prefix := filepath.ToSlash(rel) + "/"
	if rel == "." {
		prefix = ""
	}
	for path, s := range st {
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		if s.Worktree != git.Unmodified || s.Staging != git.Unmodified {
			g.Dirty = true
			break
		}
	}
	return g
}

package engine_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

func TestIngestBacklog(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("writer")
	files := fstest.MapFS{
		"README.md":           {Data: []byte("# mnemo\n\nA memory engine on Neo4j.\n\n## Install\n\nRun go install.\n")},
		"docs/deploy.md":      {Data: []byte("# Deploy\n\nDeploy with Docker on Kubernetes.\n")},
		"docs/adr/0001.md":    {Data: []byte("# ADR 1\n\nUse SQLite as the embedded store.\n")},
		"docs/bad.md":         {Data: []byte{0xff, 0xfe, 'x'}},
		".github/template.md": {Data: []byte("# skipped\n")},
	}
	run := func(t *testing.T) engine.BacklogSummary {
		t.Helper()
		var progress []engine.BacklogProgress
		sum, err := f.eng.IngestBacklog(ctx, w, engine.BacklogRequest{
			Files: files, SourceRepo: "github.com/mnemo-dev/mnemo", CommitSHA: "abc123", BatchSize: 2,
			Progress: func(p engine.BacklogProgress) { progress = append(progress, p) },
		})
		require.NoError(t, err)
		require.NotEmpty(t, progress)
		last := progress[len(progress)-1]
		assert.Equal(t, last.Total, last.Done)
		return sum
	}
	type counts struct{ added, updated, unchanged, archived, failed int }
	got := func(s engine.BacklogSummary) counts {
		return counts{s.Added, s.Updated, s.Unchanged, s.Archived, s.Failed}
	}

	first := run(t)
	assert.Equal(t, counts{added: 3, failed: 1}, got(first), first.String())
	assert.Regexp(t, `^added 3, updated 0, unchanged 0, archived 0, failed 1 in \d+\.\ds$`, first.String())

	mems := f.memories(t)
	require.Len(t, mems, 3)
	for _, m := range mems {
		assert.Equal(t, graph.SourceIngestedEvidence, m.SourceKind)
		assert.Regexp(t, `^Doc-[0-9a-f]{16}$`, m.CanonicalKey)
		assert.Contains(t, m.Tags, engine.BacklogTag)
		v, err := f.store.GetVersion(ctx, graph.Filter{Scope: f.scope, Reader: graph.System}, m.CurrentVersionID)
		require.NoError(t, err)
		assert.Equal(t, "github.com/mnemo-dev/mnemo", v.Provenance.SourceRepo)
		assert.Equal(t, "abc123", v.Provenance.CommitSHA)
		assert.NotEmpty(t, v.Provenance.Path)
	}

	again := run(t)
	assert.Equal(t, counts{unchanged: 3, failed: 1}, got(again), "re-running is idempotent")
	assert.Len(t, f.memories(t), 3)

	files["docs/deploy.md"] = &fstest.MapFile{Data: []byte("# Deploy\n\nDeploy with Helm on Kubernetes.\n")}
	delete(files, "docs/adr/0001.md")
	files["docs/new.md"] = &fstest.MapFile{Data: []byte("# New\n\nA new page.\n")}
	third := run(t)
	assert.Equal(t, counts{added: 1, updated: 1, unchanged: 1, archived: 1, failed: 1}, got(third), third.String())
	statuses := map[graph.Status]int{}
	for _, m := range f.memories(t) {
		statuses[m.Status]++
		if m.Title == "Deploy" {
			assert.Equal(t, 2, m.VersionCount)
		}
	}
	assert.Equal(t, map[graph.Status]int{graph.StatusActive: 3, graph.StatusArchived: 1}, statuses)

	t.Run("source repo is required", func(t *testing.T) {
		_, err := f.eng.IngestBacklog(ctx, w, engine.BacklogRequest{Files: files})
		require.ErrorIs(t, err, graph.ErrInvalid)
	})
}

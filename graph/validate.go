package graph

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits every backend enforces, so both refuse the same input.
const (
	MaxIDLen      = 128
	MaxTitleLen   = 1024
	MaxContentLen = 1 << 20 // bytes of one version's content
	MaxTags       = 64
	MaxTagLen     = 128
	MaxEntities   = 256 // per version
	MaxNameLen    = 256 // entity names and aliases
)

// NewID returns a new random id, time-ordered in its first 12 hex digits so
// ids sort roughly by creation.
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}

// ContentHash is the hash stored on a version: sha256 of the content with
// whitespace runs folded, so formatting-only edits hash alike.
func ContentHash(content string) string {
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(content), " ")))
	return hex.EncodeToString(sum[:])
}

// NormName is the canonical form stores match entity names on: trimmed,
// lower case, inner whitespace folded to one space.
func NormName(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), " "))
}

// CheckID validates an identifier as every write does: required, at most
// MaxIDLen bytes of valid UTF-8, every character visible (see checkID).
// The server checks ids in request paths with it.
func CheckID(field, id string) error { return checkID(field, id, false) }

// checkID validates an identifier: optional or required, bounded, valid
// UTF-8 whose every character is visible: no whitespace, no control
// characters, no format characters (zero-width spaces and joiners U+200B-
// U+200D, direction marks and overrides U+200E-U+200F, U+202A-U+202E,
// U+2066-U+2069, the byte order mark U+FEFF, soft hyphen U+00AD...), no
// private-use or unassigned code points, and no blank letters (Hangul
// fillers). Two ids that look alike must be alike.
func checkID(field, id string, optional bool) error {
	if id == "" {
		if optional {
			return nil
		}
		return invalid(field, "required")
	}
	if len(id) > MaxIDLen {
		return invalid(field, "longer than %d bytes", MaxIDLen)
	}
	if !utf8.ValidString(id) {
		return invalid(field, "not valid UTF-8")
	}
	for _, r := range id {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return invalid(field, "contains whitespace or control characters")
		case !unicode.IsGraphic(r) || blankLetter(r):
			return invalid(field, "contains the invisible or direction-changing character U+%04X", r)
		}
	}
	return nil
}

// blankLetter reports letters that render as nothing.
func blankLetter(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800':
		return true
	}
	return false
}

// checkText validates free text: valid UTF-8, no NUL, at most max bytes.
func checkText(field, s string, max int) error {
	if len(s) > max {
		return invalid(field, "longer than %d bytes", max)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return invalid(field, "contains NUL")
	}
	return nil
}

// Validate checks a memory as it is about to be written.
func (m Memory) Validate() error {
	if err := m.Scope.Validate(); err != nil {
		return err
	}
	for _, c := range []struct {
		field, v string
		optional bool
	}{
		{"id", m.ID, true}, {"user_id", m.UserID, true}, {"type", m.Type, false},
		{"subject_id", m.SubjectID, true}, {"project_id", m.ProjectID, true},
		{"session_id", m.SessionID, true}, {"channel", m.Channel, true},
	} {
		if err := checkID(c.field, c.v, c.optional); err != nil {
			return err
		}
	}
	for _, c := range []struct{ field, v string }{
		{"title", m.Title}, {"layer", m.Layer}, {"sublayer", m.Sublayer},
		{"canonical_key", m.CanonicalKey}, {"subject_type", m.SubjectType},
	} {
		if err := checkText(c.field, c.v, MaxTitleLen); err != nil {
			return err
		}
	}
	if m.Status != "" && !m.Status.valid() {
		return invalid("status", "unknown status %q", m.Status)
	}
	if m.SourceKind != "" && !m.SourceKind.valid() {
		return invalid("source_kind", "unknown source kind %q", m.SourceKind)
	}
	if m.Visibility != "" && !m.Visibility.valid() {
		return invalid("visibility", "unknown visibility %q", m.Visibility)
	}
	if m.Importance < 0 || m.Importance > 1 || m.Importance != m.Importance {
		return invalid("importance", "must be within [0, 1]")
	}
	if !m.ValidFrom.IsZero() && !m.ValidTo.IsZero() && !m.ValidFrom.Before(m.ValidTo) {
		return invalid("valid_to", "must be after valid_from")
	}
	if len(m.Tags) > MaxTags {
		return invalid("tags", "more than %d tags", MaxTags)
	}
	for _, t := range m.Tags {
		if t == "" {
			return invalid("tags", "empty tag")
		}
		if err := checkText("tags", t, MaxTagLen); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a new version's content, chunks and entities.
func (v VersionInput) Validate() error {
	if err := checkID("version.id", v.ID, true); err != nil {
		return err
	}
	if strings.TrimSpace(v.Content) == "" {
		return invalid("content", "required")
	}
	if v.Settles != nil {
		if err := v.Settles.Validate(); err != nil {
			return err
		}
	}
	for _, a := range v.Audit {
		if err := a.Validate(); err != nil {
			return err
		}
	}
	if err := checkText("content", v.Content, MaxContentLen); err != nil {
		return err
	}
	for _, c := range []struct{ field, v string }{{"summary", v.Summary}, {"index_text", v.IndexText}} {
		if err := checkText(c.field, c.v, MaxContentLen); err != nil {
			return err
		}
	}
	if err := validateEntities("entities", v.Entities); err != nil {
		return err
	}
	seen := make(map[string]bool, len(v.Chunks))
	for _, c := range v.Chunks {
		if err := checkText("chunks.chunk_key", c.Key, MaxTitleLen); err != nil {
			return err
		}
		if seen[c.Key] {
			return invalid("chunks.chunk_key", "duplicate chunk key %q", c.Key)
		}
		seen[c.Key] = true
		if c.Start < 0 || c.End < c.Start || c.End > len(v.Content) {
			return invalid("chunks", "chunk %q range [%d,%d) outside content", c.Key, c.Start, c.End)
		}
		if err := validateEntities("chunks.entities", c.Entities); err != nil {
			return err
		}
	}
	return nil
}

func validateEntities(field string, refs []EntityRef) error {
	if len(refs) > MaxEntities {
		return invalid(field, "more than %d entities", MaxEntities)
	}
	for _, e := range refs {
		if NormName(e.Name) == "" && NormName(e.NormName) == "" {
			return invalid(field, "entity without a name")
		}
		for _, s := range append([]string{e.Name, e.NormName, e.Type}, e.Aliases...) {
			if err := checkText(field, s, MaxNameLen); err != nil {
				return err
			}
		}
	}
	return nil
}

// Normalize fills defaults on a memory input: status, source kind,
// visibility, access count, timestamps, entity norm names and the content
// hash. Backends call it after Validate, so both store the same values.
func (in *MemoryInput) Normalize(now time.Time) {
	m := &in.Memory
	if m.ID == "" {
		m.ID = NewID()
	}
	if m.Status == "" {
		m.Status = StatusActive
	}
	if m.SourceKind == "" {
		m.SourceKind = SourceAuthored
	}
	if m.Visibility == "" {
		m.Visibility = VisibilityUser
	}
	if m.AccessCount < 1 {
		m.AccessCount = 1
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	m.CurrentVersionID, m.VersionCount, m.SupersededBy = "", 0, ""
	in.Version.Normalize()
}

// Normalize fills a version input's id, content hash and entity norm names.
func (v *VersionInput) Normalize() {
	if v.ID == "" {
		v.ID = NewID()
	}
	if v.ContentHash == "" {
		v.ContentHash = ContentHash(v.Content)
	}
	normRefs(v.Entities)
	for i := range v.Chunks {
		normRefs(v.Chunks[i].Entities)
	}
}

func normRefs(refs []EntityRef) {
	for i := range refs {
		if refs[i].NormName == "" {
			refs[i].NormName = NormName(refs[i].Name)
		} else {
			refs[i].NormName = NormName(refs[i].NormName)
		}
		if refs[i].Name == "" {
			refs[i].Name = refs[i].NormName
		}
	}
}

// Validate checks a memory input as a whole.
func (in MemoryInput) Validate() error {
	if err := in.Memory.Validate(); err != nil {
		return err
	}
	if err := checkID("supersedes", in.Supersedes, true); err != nil {
		return err
	}
	if in.Supersedes != "" && in.Supersedes == in.Memory.ID {
		return invalid("supersedes", "a memory cannot supersede itself")
	}
	for _, a := range in.Audit {
		if err := a.Validate(); err != nil {
			return err
		}
	}
	if len(in.Version.Audit) > 0 {
		return invalid("version.audit", "a new memory's audit events go in audit")
	}
	if in.Version.Settles != nil {
		return invalid("version.settles", "a new memory's settlement goes in settles")
	}
	if in.Settles != nil {
		if err := in.Settles.Validate(); err != nil {
			return err
		}
	}
	return in.Version.Validate()
}

// Validate checks an audit event.
func (a AuditEvent) Validate() error {
	if err := a.Scope.Validate(); err != nil {
		return err
	}
	if err := checkID("audit.action", a.Action, false); err != nil {
		return err
	}
	if err := checkID("audit.subject_id", a.SubjectID, true); err != nil {
		return err
	}
	for _, c := range []struct{ field, v string }{
		{"audit.subject_kind", a.SubjectKind}, {"audit.actor_id", a.ActorID}, {"audit.rule", a.Rule},
		{"audit.outcome", a.Outcome}, {"audit.reason", a.Reason},
	} {
		if err := checkText(c.field, c.v, MaxTitleLen); err != nil {
			return err
		}
	}
	return nil
}

// SizeText names a byte limit in a message: "1 MiB (1048576 bytes)", or
// "1000 bytes" when it is not a whole number of MiB or KiB. The engine's
// and the server's size refusals share it so they read alike.
func SizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB (%d bytes)", n>>20, n)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB (%d bytes)", n>>10, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

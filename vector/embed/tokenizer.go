package embed

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// BERT special tokens, as spelled in an uncased BERT vocab.txt.
const (
	tokPad  = "[PAD]"
	tokUnk  = "[UNK]"
	tokCLS  = "[CLS]"
	tokSEP  = "[SEP]"
	tokMask = "[MASK]"

	// maxWordChars is the WordPiece limit above which a whole word becomes [UNK].
	maxWordChars = 100
	// subwordPrefix marks a WordPiece piece that continues a word.
	subwordPrefix = "##"
)

// tokenizer is a BERT uncased WordPiece tokenizer. It reproduces the pipeline
// that Hugging Face tokenizers builds for an uncased BERT model (the one
// sentence-transformers runs): special tokens matched verbatim in the raw
// text, BertNormalizer (clean text, pad CJK ideographs, strip accents,
// lowercase), BertPreTokenizer (split on whitespace, isolate punctuation),
// greedy longest-match WordPiece with "##" continuations, then
// [CLS] ... [SEP] with truncation to maxLength ids. It is immutable after
// construction and safe for concurrent use.
type tokenizer struct {
	vocab     map[string]int64
	special   []string // verbatim special tokens, matched before normalisation
	unk       int64
	cls       int64
	sep       int64
	pad       int64
	lowercase bool
	maxLength int // ids per text including [CLS] and [SEP]
	piece     int // bytes of raw text normalised at a time (encodePiece)
}

// encodePiece is how much raw text Encode normalises and splits at a time,
// cut at ASCII whitespace, so that it stops reading once it has maxLength
// ids: a 1 MiB text took 400 ms to encode 512 ids when it was normalised
// whole (at ddf9847, 2026-11-26).
const encodePiece = 4 << 10

// loadVocab reads a vocab.txt: one token per line, the id is the line index.
func loadVocab(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open vocab: %w", err)
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		tokens = append(tokens, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read vocab %s: %w", path, err)
	}
	return tokens, nil
}

// newTokenizer builds a tokenizer over vocab (index = id). lowercase selects
// the uncased pipeline (lowercase and strip accents); maxLength (>= 3) bounds
// the ids Encode returns, [CLS] and [SEP] included.
func newTokenizer(vocab []string, lowercase bool, maxLength int) (*tokenizer, error) {
	if maxLength < 3 {
		return nil, fmt.Errorf("tokenizer max length %d: %w", maxLength, errTooShort)
	}
	t := &tokenizer{
		vocab:     make(map[string]int64, len(vocab)),
		lowercase: lowercase,
		maxLength: maxLength,
		piece:     encodePiece,
	}
	for i, tok := range vocab {
		if _, dup := t.vocab[tok]; !dup {
			t.vocab[tok] = int64(i)
		}
	}
	for _, s := range []struct {
		tok string
		id  *int64
	}{{tokUnk, &t.unk}, {tokCLS, &t.cls}, {tokSEP, &t.sep}, {tokPad, &t.pad}} {
		id, ok := t.vocab[s.tok]
		if !ok {
			return nil, fmt.Errorf("vocab lacks %s: %w", s.tok, errBadVocab)
		}
		*s.id = id
	}
	for _, tok := range []string{tokMask, tokCLS, tokUnk, tokPad, tokSEP} {
		if _, ok := t.vocab[tok]; ok {
			t.special = append(t.special, tok)
		}
	}
	return t, nil
}

var (
	errTooShort = errors.New("must be at least 3")
	errBadVocab = errors.New("invalid vocab")
)

// Encode returns the model input ids for text: [CLS], the WordPiece ids of
// text truncated to maxLength-2, [SEP].
func (t *tokenizer) Encode(text string) []int64 {
	ids := make([]int64, 1, 16)
	ids[0] = t.cls
	limit := t.maxLength - 1 // room left for [SEP]
	for _, seg := range t.splitSpecial(text) {
		if len(ids) >= limit {
			break
		}
		if seg.special {
			ids = append(ids, t.vocab[seg.text])
			continue
		}
		for rest := seg.text; rest != "" && len(ids) < limit; {
			piece := cutPiece(rest, t.piece)
			rest = rest[len(piece):]
			for _, word := range preTokenize(t.normalize(piece)) {
				ids = t.appendWordPiece(ids, word)
				if len(ids) >= limit {
					break
				}
			}
		}
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return append(ids, t.sep)
}

// cutPiece returns the start of s up to about n bytes, cut just after an
// ASCII whitespace character (or all of s when it has none past n). No
// normalisation step looks across whitespace — pre-tokenisation splits
// there and a space starts no canonical reordering — so normalising the
// pieces one by one gives what normalising s whole does.
func cutPiece(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexAny(s[:n], " \t\n\r"); i >= 0 {
		return s[:i+1]
	}
	if i := strings.IndexAny(s[n:], " \t\n\r"); i >= 0 {
		return s[:n+i+1]
	}
	return s
}

// segment is a run of raw text, or one verbatim special token.
type segment struct {
	text    string
	special bool
}

// splitSpecial cuts text around verbatim occurrences of the special tokens
// ("[SEP]", "[MASK]", ...), which the reference tokenizer maps straight to
// their ids without normalising them.
func (t *tokenizer) splitSpecial(text string) []segment {
	var segs []segment
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		for _, tok := range t.special {
			if strings.HasPrefix(text[i:], tok) {
				if i > start {
					segs = append(segs, segment{text: text[start:i]})
				}
				segs = append(segs, segment{text: tok, special: true})
				start = i + len(tok)
				i = start - 1
				break
			}
		}
	}
	if start < len(text) {
		segs = append(segs, segment{text: text[start:]})
	}
	return segs
}

// normalize applies BertNormalizer: drop NUL, U+FFFD and control characters,
// map whitespace to ' ', put spaces around CJK ideographs, and for uncased
// models strip accents (NFD, drop non-spacing marks) and lowercase.
func (t *tokenizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	if !t.lowercase {
		return b.String()
	}
	decomposed := norm.NFD.String(b.String())
	b.Reset()
	for _, r := range decomposed {
		if known(r) && unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// preTokenize applies BertPreTokenizer: split on whitespace and make every
// punctuation character a word of its own.
func preTokenize(s string) []string {
	var words []string
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			words = append(words, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// appendWordPiece appends the greedy longest-match-first WordPiece ids of
// word to ids; a word with no complete segmentation, or longer than
// maxWordChars characters, becomes a single [UNK].
func (t *tokenizer) appendWordPiece(ids []int64, word string) []int64 {
	if utf8.RuneCountInString(word) > maxWordChars {
		return append(ids, t.unk)
	}
	mark := len(ids)
	var buf []byte
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			buf = buf[:0]
			if start > 0 {
				buf = append(buf, subwordPrefix...)
			}
			buf = append(buf, word[start:end]...)
			if id, ok := t.vocab[string(buf)]; ok {
				ids = append(ids, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return append(ids[:mark], t.unk)
		}
		start = end
	}
	return ids
}

// isWhitespace reports the characters BERT treats as spaces: \t, \n, \r and
// the Unicode White_Space property.
func isWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

// isControl reports characters BERT deletes while cleaning text: control,
// format, private use and surrogate, except \t, \n and \r. Unassigned
// code points are kept.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return known(r) && unicode.Is(unicode.C, r)
}

// isPunct reports BERT punctuation: all ASCII punctuation and symbols
// (so "$", "+", "^" split too) and the Unicode punctuation categories.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return known(r) && unicode.IsPunct(r)
}

// bertAssigned holds the code points the reference tokenizer has a category
// for. Hugging Face tokenizers takes the categories that BertNormalizer
// (control, non-spacing mark) and BertPreTokenizer (punctuation) test from
// old Unicode tables; compared on every code point, Unicode 8.0.0 matches it
// on all but about 60 rare ones. A character assigned later is unassigned to
// it: kept, and neither control, mark nor punctuation.
var bertAssigned = rangetable.Assigned("8.0.0")

// known reports whether the reference tokenizer knows r's category.
func known(r rune) bool {
	return r < utf8.RuneSelf || bertAssigned == nil || unicode.Is(bertAssigned, r)
}

// isCJK reports CJK Unified Ideographs (and extensions and compatibility
// ideographs), the blocks BERT tokenizes one character at a time. The ranges
// are those of Hugging Face tokenizers' BertNormalizer.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

package extract_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/extract"
)

// compareTests are statement pairs and how b (new) stands to a (stored).
var compareTests = []struct {
	name string
	a, b string
	want extract.Relation
}{
	{"case and full stop", "The quokka habitat survey found marmalade traces.", "the quokka habitat survey found marmalade traces", extract.Restates},
	{"fluff", "I think the build basically takes 5 minutes.", "The build takes 5 minutes.", extract.Restates},
	{"whitespace and punctuation", "Backups run at 02:00 UTC.", "Backups  run at 02:00 UTC !", extract.Restates},
	{"light verb and synonym", "The database runs on port 5432", "The DB port is 5432", extract.Restates},
	{"contraction", "Maria doesn't eat meat.", "Maria does not eat meat.", extract.Restates},
	{"number word", "The default page size is 50.", "The default page size is fifty.", extract.Restates},
	{"says less", "The meeting is on Monday at 10:00.", "The meeting is on Monday.", extract.Restates},
	{"predicate reordered", "Invoice 2291 was paid on 3 March.", "Invoice 2291 was paid on March 3.", extract.Restates},
	{"British spelling", "The colour of the logo is teal.", "The color of the logo is teal.", extract.Restates},
	{"British ending after a plural", "The van needs new tyres.", "The van needs new tires.", extract.Restates},
	{"hyphenated compound", "The e-mail relay drops large attachments.", "The email relay drops large attachments.", extract.Restates},
	{"teen number word", "The rack holds sixteen servers.", "The rack holds 16 servers.", extract.Restates},
	{"passive with got", "The boiler was serviced in 2024.", "The boiler got serviced in 2024.", extract.Restates},
	{"progressive of a known verb", "My cousin is living in Porto.", "My cousin lives in Porto.", extract.Restates},
	{"subject words reordered", "The budget for marketing is 20k euros.", "The marketing budget is 20k euros.", extract.Restates},
	{"unit spelled out", "The request timeout is 30s.", "The request timeout is 30 seconds.", extract.Restates},
	{"unit attached", "Each node has 64GB of memory.", "Each node has 64 GB of memory.", extract.Restates},
	{"bound spelled two ways", "The queue holds up to 500 jobs.", "The queue holds at most 500 jobs.", extract.Restates},
	{"frequency adverb", "The report is sent weekly.", "The report is sent every week.", extract.Restates},
	{"verb and noun of one root", "The warranty covers repairs before expiry.", "The warranty covers repairs before it expires.", extract.Restates},
	{"adjective and noun of one root", "Sam is allergic to pollen.", "Sam has a pollen allergy.", extract.Restates},
	{"synonym of a slot verb", "The spare key is kept under the mat.", "The spare key is stored under the mat.", extract.Restates},
	{"passive of the same verb", "The load balancer terminates TLS.", "TLS is terminated at the load balancer.", extract.Restates},
	{"has and is in", "Room 5 has the spare keys.", "The spare keys are in room 5.", extract.Restates},
	{"phrase moved into the subject", "The review went well with the Globex team.", "The review with the Globex team went well.", extract.Restates},
	{"date moved to the front", "The gas meter read 1234 on 2 June.", "On 2 June the gas meter read 1234.", extract.Restates},
	{"load alternation", "Crate 4 was filled with apples on Monday.", "Apples were filled into crate 4 on Monday.", extract.Restates},
	{"roles turned by the passive", "Alice hired Bob.", "Alice was hired by Bob.", extract.Unsure},
	{"names swapped in one passive", "Alice was hired by Bob.", "Bob was hired by Alice.", extract.Unsure},
	{"names in the subject swapped", "The Berlin office of the London team closes at 17:00.", "The London office of the Berlin team closes at 17:00.", extract.Unsure},

	{"numbered observations", "Orca seed observation number 1", "Orca seed observation number 2", extract.Distinct},
	{"side notes", "Sharedx side note 1 about hydrophone 11", "Sharedx side note 2 about hydrophone 22", extract.Distinct},
	{"id in the subject", "Incident INC-1234 was caused by a bad deploy.", "Incident INC-1250 was caused by a bad deploy.", extract.Distinct},
	{"id after an id noun", "Priya reviewed PR 4521.", "Priya reviewed PR 4533.", extract.Distinct},
	{"another subject", "The staging database runs on port 5432.", "The production database runs on port 5432.", extract.Distinct},
	{"names in the subject", "Alice's phone number is 555-0142.", "Bob's phone number is 555-0142.", extract.Distinct},

	{"port", "The API server listens on port 8080.", "The API server listens on port 9090.", extract.Updates},
	{"copula name", "The project lead is Kofi.", "The project lead is Amara.", extract.Updates},
	{"attribute noun", "The deploy target is staging.", "The deploy target is production.", extract.Updates},
	{"copula adjective", "Our landlord's dog is friendly.", "Our landlord's dog is old.", extract.Unsure},
	{"single-valued verb", "Alice reports to Bob.", "Alice reports to Carol.", extract.Updates},
	{"version", "We use Postgres 15 for the billing service.", "We use Postgres 16 for the billing service.", extract.Updates},
	{"polarity", "The cache is enabled.", "The cache isn't enabled.", extract.Updates},
	{"password after a copula", "The office wifi password is Lighthouse42.", "The office wifi password is Harbour77.", extract.Updates},
	{"date", "The lease ends on 31 August 2027.", "The lease ends on 30 September 2027.", extract.Updates},
	{"temperature unit named", "The oven is set to 180 degrees.", "The oven is set to 180°C.", extract.Updates},
	{"degrees of a coordinate", "The lighthouse stands at 45°N.", "The lighthouse stands at 45°N.", extract.Restates},
	{"name with a particle", "Our notary is Anna Schmidt.", "Our notary is Jan van Dijk.", extract.Updates},
	{"another holder of a definite role", "Staging is the default target.", "Production is the default target.", extract.Updates},
	{"another lead of one team", "Amara leads the data team.", "Kwame leads the data team.", extract.Updates},
	{"a standing arrangement's place", "The choir meets at the town hall on Thursdays.", "The choir meets at the library on Thursdays.", extract.Updates},
	{"a standing arrangement's time", "The shop opens at 09:00 on Sundays.", "The shop opens at 10:00 on Sundays.", extract.Updates},
	{"the end of a state", "The road is closed until Friday.", "The road is closed until Monday.", extract.Updates},
	{"another choice for one purpose", "Our team uses Slack for chat.", "Our team uses Zulip for chat.", extract.Updates},
	{"an event that happens once", "Marta joined the choir in 2015.", "Marta joined the choir in 2016.", extract.Updates},
	{"the same thing described anew", "The laptop is a silver MacBook.", "The laptop is a black MacBook.", extract.Updates},
	{"titled name", "Our vet is Dr. Okoye.", "Our vet is Dr. Lindqvist.", extract.Updates},
	{"id after an id noun", "The train departs from platform A3.", "The train departs from platform B7.", extract.Updates},
	{"id after a plain word", "The cable is plugged into switch X9.", "The cable is plugged into switch Y2.", extract.Distinct},

	{"event verb, another object", "Alice met Bob on Monday.", "Alice met Carol on Monday.", extract.Unsure},
	{"words swapped across the verb", "Alice reports to Bob.", "Bob reports to Alice.", extract.Unsure},
	{"one of many slots", "Ahmed is allergic to peanuts.", "Ahmed is allergic to penicillin.", extract.Unsure},
	{"a verb of many objects", "Kofi leads the mobile team.", "Kofi leads the hiring committee.", extract.Unsure},
	{"another relation", "The office coffee machine is broken.", "The office coffee machine is in the kitchen.", extract.Unsure},
	{"open on many days", "The library is open on Saturdays.", "The library is open on Sundays.", extract.Unsure},
	{"a code, not a quantity", "The v2 client retries on 503.", "The v2 client retries on 429.", extract.Unsure},
	{"an event on another date", "Alice flew to Paris on 3 March.", "Alice flew to Paris on 9 March.", extract.Unsure},
	{"an event in another year", "Aisha visited the Berlin office in 2019.", "Aisha visited the Berlin office in 2021.", extract.Unsure},
	{"another modal", "Passwords must be rotated every 90 days.", "Passwords may be rotated every 90 days.", extract.Unsure},
	{"names and an indefinite object", "Alice owns a Tesla.", "Bob owns a Tesla.", extract.Distinct},
	{"names and a verb of many holders", "Kofi works on the mobile team.", "Lena works on the mobile team.", extract.Distinct},
	{"an indefinite object's detail", "The orders table has an index on customer_id.", "The orders table has an index on created_at.", extract.Distinct},
	{"an indefinite object's time", "The client sends an invoice in March.", "The client sends an invoice in April.", extract.Unsure},
	{"a past event on another day", "Jonas called the bank on Monday.", "Jonas called the bank on Thursday.", extract.Unsure},
	{"another purpose", "We use Postgres for the billing service.", "We use Postgres for the analytics service.", extract.Unsure},
	{"another noun after a copula", "Alice's sister is a doctor.", "Alice's sister is a teacher.", extract.Unsure},
	{"one of many relatives", "Alice is my sister.", "Carol is my sister.", extract.Distinct},
	{"coordinated holders", "Kofi and Lena lead the mobile team.", "Lena leads the mobile team.", extract.Distinct},
	{"another modifier, not a colour", "The cat is a black cat.", "The cat is a fat cat.", extract.Unsure},
	{"an attribute described", "The log format is JSON.", "The log format is configurable.", extract.Unsure},
	{"a repeated visit", "The nurse visits the ward at 09:00.", "The nurse visits the ward at 15:00.", extract.Unsure},
	{"not a word form", "The plan is approved.", "The plane is approved.", extract.Distinct},
	{"another aspect", "The report is printed.", "The report is printing.", extract.Unsure},
	{"upper and lower bound", "The queue holds at most 500 jobs.", "The queue holds at least 500 jobs.", extract.Unsure},
	{"another kind of value", "The project lead is Kofi.", "The project lead is on vacation.", extract.Unsure},
}

func TestCompare(t *testing.T) {
	k := extract.NewKeyer(defaultPolicy(t))
	for _, tt := range compareTests {
		t.Run(tt.name, func(t *testing.T) {
			got := k.Compare(tt.a, tt.b)
			assert.Equal(t, tt.want, got.Relation, "%q vs %q: %s", tt.a, tt.b, got.Reason)
			assert.NotEmpty(t, got.Reason)
		})
	}
}

// TestStatementReuse: a Statement analysed once and then shared — across
// comparisons and goroutines, as the engine's cache of stored versions'
// statements shares it — relates, overlaps and keys exactly as statements
// analysed afresh for every call, and is left as it was analysed: nothing
// that reads a Statement writes into its slices.
func TestStatementReuse(t *testing.T) {
	k := extract.NewKeyer(defaultPolicy(t))
	var texts []string
	for _, tt := range compareTests {
		texts = append(texts, tt.a, tt.b)
	}
	shared := make([]extract.Statement, len(texts))
	for i, text := range texts {
		shared[i] = k.Statement(text)
	}
	// Each text meets its table partner, itself and its next four
	// neighbours, both ways round.
	check := func(i int) {
		for _, j := range []int{i ^ 1, i, (i + 1) % len(texts), (i + 2) % len(texts), (i + 3) % len(texts), (i + 4) % len(texts)} {
			for _, p := range [][2]int{{i, j}, {j, i}} {
				a, b := texts[p[0]], texts[p[1]]
				fa, fb := k.Statement(a), k.Statement(b)
				sa, sb := shared[p[0]], shared[p[1]]
				assert.Equal(t, k.Compare(a, b), k.Relate(sa, sb), "%q vs %q", a, b)
				assert.Equal(t, k.Overlap(fa, fb), k.Overlap(sa, sb), "%q vs %q", a, b)
				assert.Equal(t, k.SameSubject(fa, fb), k.SameSubject(sa, sb), "%q vs %q", a, b)
			}
		}
		fresh := k.Statement(texts[i])
		for _, key := range []string{"project-lead-", "x"} {
			assert.Equal(t, k.SlotKey(key, fresh), k.SlotKey(key, shared[i]), "%q", texts[i])
			assert.Equal(t, k.FactKey(key, fresh), k.FactKey(key, shared[i]), "%q", texts[i])
		}
		assert.Equal(t, fresh.Words(), shared[i].Words(), "%q", texts[i])
	}
	var wg sync.WaitGroup
	for i := range texts {
		wg.Go(func() { check(i) })
	}
	wg.Wait()
	for i, text := range texts {
		assert.Equal(t, k.Statement(text), shared[i], "the statement of %q changed in use", text)
	}
}

// TestFallbackKeys: slot and fact keys keep the key's shape and length,
// are stable across restatements, and tell different content apart.
func TestFallbackKeys(t *testing.T) {
	k := extract.NewKeyer(defaultPolicy(t))
	a, b := "Orca seed observation number 2", "orca seed observation number 2!"
	key := k.Key(a)
	assert.Equal(t, key, k.Key(b))
	for name, f := range map[string]func(string, extract.Statement) string{"slot": k.SlotKey, "fact": k.FactKey} {
		t.Run(name, func(t *testing.T) {
			got := f(key, k.Statement(a))
			assert.Regexp(t, keyShape, got)
			assert.LessOrEqual(t, len(got), 30)
			assert.NotEqual(t, key, got)
			assert.Equal(t, got, f(key, k.Statement(b)), "a restatement finds the same key")
			assert.NotEqual(t, got, f(key, k.Statement("Orca seed observation number 3")))
		})
	}
	long := "The internationalization listens on localhost"
	assert.Regexp(t, keyShape, k.SlotKey(k.Key(long), k.Statement(long)))
	assert.Regexp(t, keyShape, k.FactKey("caller-key", k.Statement("anything")), "a key of another shape still yields a SAQ-shaped variant")
}

func FuzzCompare(f *testing.F) {
	k := extract.NewKeyer(defaultPolicy(f))
	for _, s := range []string{"The API server listens on port 8080.", "Orca seed observation number 1", "Maria doesn't eat meat.",
		"", "'", "I'm", "#", "a-b-c", "\"quoted\"", "v1.2.3", "May", "n't", "..."} {
		f.Add(s, strings.ToUpper(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c := k.Compare(a, b)
		if c.Reason == "" {
			t.Fatalf("Compare(%q, %q): no reason", a, b)
		}
		if k.Compare(a, a).Relation != extract.Restates {
			t.Fatalf("Compare(%q, itself) is not a restatement", a)
		}
		for _, key := range []string{k.SlotKey(k.Key(a), k.Statement(b)), k.FactKey(k.Key(a), k.Statement(b))} {
			if len(key) > 30 || !keyShape.MatchString(key) {
				t.Fatalf("fallback key %q of %q: bad shape or longer than 30", key, b)
			}
		}
	})
}

// BenchmarkCompare measures one key collision's extra cost on the write
// path: two statements analysed, related, and the slot and fact keys.
//
//	go test ./extract -run '^$' -bench BenchmarkCompare
func BenchmarkCompare(b *testing.B) {
	k := extract.NewKeyer(defaultPolicy(b))
	a, c := "The API server listens on port 8080 behind the staging load balancer.", "the api server listens on port 9090 behind the staging load balancer"
	key := k.Key(c)
	b.ReportAllocs()
	for b.Loop() {
		sa, sc := k.Statement(a), k.Statement(c)
		k.Relate(sa, sc)
		k.SlotKey(key, sc)
		k.FactKey(key, sc)
	}
}

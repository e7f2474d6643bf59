package importer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPairLookalikes: a record no longer in the export pairs with a new
// one that shares all but one of the id's columns, or the name; never on
// an id of one column alone, and each record once.
func TestPairLookalikes(t *testing.T) {
	t.Parallel()
	l := func(id string, fields ...string) lookalike {
		h := map[string]string{}
		for i := 0; i+1 < len(fields); i += 2 {
			h[fields[i]] = fields[i+1]
		}
		return lookalike{id: id, hashes: h}
	}
	from := []string{"Name", "E-Mail", "Telefon"}
	idFields := []string{"last_name", "email", "phone"}
	names := []string{"first_name", "last_name"}
	pairs := func(old, made []lookalike, idFields, from []string) []string {
		var out []string
		for _, p := range pairLookalikes(old, made, idFields, from, names) {
			out = append(out, p.gone.id+">"+p.made.id+":"+strings.Join(p.differ, ","))
		}
		return out
	}

	old := []lookalike{
		l("a1", "last_name", "anna", "email", "a@x", "phone", "1"),  // e-mail edited
		l("b1", "last_name", "berg", "email", "b@x", "phone", "2"),  // e-mail and phone edited, same name
		l("c1", "last_name", "cole", "email", "c@x", "phone", "3"),  // left
		l("d1", "last_name", "dahl", "email", "d@x", "phone", "4"),  // left
		l("t1", "last_name", "tomas", "email", "t@x", "phone", "6"), // renamed
	}
	made := []lookalike{
		l("a2", "last_name", "anna", "email", "a2@x", "phone", "1"),
		l("b2", "last_name", "berg", "email", "b2@x", "phone", "9"),
		l("e2", "last_name", "eker", "email", "e@x", "phone", "5"), // came
		l("t2", "last_name", "tomasz", "email", "t@x", "phone", "6"),
	}
	require.Equal(t, []string{"a1>a2:E-Mail", "b1>b2:E-Mail,Telefon", "t1>t2:Name"}, pairs(old, made, idFields, from))

	// Two gone that look like one new one: the first pairs, by id order.
	old = append(old, l("a0", "last_name", "anna", "email", "a@x", "phone", "7"))
	require.Equal(t, []string{"a0>a2:E-Mail,Telefon", "b1>b2:E-Mail,Telefon", "t1>t2:Name"}, pairs(old, made, idFields, from))

	// An id of one column (a company's Name): sharing "all but one" of
	// one column is sharing nothing; the name, though, still pairs (here
	// the id is not the name).
	one := func(id, domain, name string) lookalike { return l(id, "domain", domain, "name", name) }
	names = []string{"name"}
	require.Empty(t, pairs([]lookalike{one("x1", "x.example.com", "X AB")}, []lookalike{one("y1", "y.example.com", "Y AB")},
		[]string{"domain"}, []string{"Website"}))
	require.Equal(t, []string{"x1>x2:Website"}, pairs([]lookalike{one("x1", "x.example.com", "X AB")}, []lookalike{one("x2", "x2.example.com", "X AB")},
		[]string{"domain"}, []string{"Website"}))
	// A record without hashes (a slot older than R17) looks like nothing.
	require.Empty(t, pairs([]lookalike{l("z1")}, []lookalike{l("z2")}, []string{"last_name", "email"}, []string{"Name", "E-Mail"}))
}

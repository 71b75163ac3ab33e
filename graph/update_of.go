package graph

// UpdateOf returns an update that writes the named fields of s, each through
// the field's default handle (the first declared on it): code that receives
// state edits as data (a JSON body naming the fields it sets, as an HTTP API
// does) turns them into an update for [Thread.Update] with it. A graph that
// lists its own handles ([Graph.Fields]) has [Compiled.UpdateOf], which
// writes through those. Names are the fields' Go names, as [Field.Name]
// gives them. A name with no handle declared on it is an error naming the
// field and the fix.
func UpdateOf[S any](s S, fields ...string) (Update[S], error) {
	sch := schemaOf[S]()
	return updateOf(sch, func(n int) *fieldOps[S] { return sch.list()[n].def }, s, fields)
}

package state

// Rewind says where a document goes under the plan, given its current next (a module name,
// or "" when done). prev and cur are the lists given to Diff. The answer depends only on next,
// so a catalog can apply it once per distinct next value rather than once per document.
//
// A document's position p is the index of its next in prev, or len(prev) when next is "": it
// has run prev[:p]. With k = RequeueFrom ≥ 0, a document with p ≥ k goes to cur[k]:
//   - insertion or replacement at k: documents waiting on old k, later ones and done ones go
//     to the new module k; documents before k stay;
//   - uid change at k (same name): documents past k (p > k) go back to k; those waiting at k
//     keep waiting there (cur[k] has their next's name);
//   - reorder: the first differing position is k, as above;
//   - append at the end (k = len(prev)): only done documents (next "") move, to the new module;
//   - removal in the middle: the positions after it shift, so k is the removed module's
//     position and documents from there on go to cur[k], the module after it.
//
// Otherwise a document waiting on a removed module moves on to the first module after it in
// prev that cur still has, or "" (removal of the last module: nothing is requeued, its waiting
// documents are done). Everything else stays.
//
// Edge cases: on FirstStart or Unchanged, next is returned as is. A next that is in cur but not
// in prev was set by this same plan (a crash before Save replays it) and stays, which makes
// Rewind(Rewind(x)) == Rewind(x). A next in neither list names no module anyone will run, so
// the document starts the pipeline again at cur[0] ("" when cur is empty) rather than stall.
func (p Plan) Rewind(prev, cur []Module, next string) string {
	if p.FirstStart || p.Unchanged {
		return next
	}
	pos := len(prev)
	if next != "" {
		if pos = indexOf(prev, next); pos < 0 {
			switch {
			case indexOf(cur, next) >= 0:
				return next
			case len(cur) == 0:
				return ""
			}
			return cur[0].Name
		}
	}
	if p.RequeueFrom >= 0 && p.RequeueFrom < len(cur) && pos >= p.RequeueFrom {
		return cur[p.RequeueFrom].Name
	}
	if next == "" || indexOf(cur, next) >= 0 {
		return next
	}
	for _, m := range prev[pos+1:] {
		if indexOf(cur, m.Name) >= 0 {
			return m.Name
		}
	}
	return ""
}

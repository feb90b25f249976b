package search

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The filter grammar (Meilisearch 1.21's, minus geo and CONTAINS):
//
//	expr = and { "OR" and }
//	and  = not { "AND" not }
//	not  = "NOT" not | "(" expr ")" | cond
//	cond = attr ( op value | value "TO" value | ["NOT"] "IN" "[" [value {"," value} [","]] "]"
//	       | ["NOT"] "EXISTS" | "IS" ["NOT"] ("NULL" | "EMPTY") | ["NOT"] "STARTS" "WITH" value )
//	op   = "=" | "!=" | ">" | ">=" | "<" | "<="
//
// Keywords are upper case; a value or attribute spelled like one must be quoted.
// Negative forms (!=, NOT IN, NOT EXISTS, IS NOT …, NOT STARTS WITH) parse as NOT of the
// positive form: they are exact complements, documents without the attribute included.

// filterNode is a node of the filter AST: *orNode, *andNode, *notNode or *condNode.
type filterNode interface{ filterNode() }

type orNode struct{ kids []filterNode }
type andNode struct{ kids []filterNode }
type notNode struct{ kid filterNode }

type condOp int

const (
	opEq condOp = iota
	opGt
	opGe
	opLt
	opLe
	opRange // lo TO hi
	opIn
	opExists
	opIsNull
	opIsEmpty
	opStartsWith
)

type condNode struct {
	attr string
	op   condOp
	vals []filterValue // one for opEq..opLe and opStartsWith; lo, hi for opRange; any for opIn
}

func (*orNode) filterNode()   {}
func (*andNode) filterNode()  {}
func (*notNode) filterNode()  {}
func (*condNode) filterNode() {}

// filterValue is a literal. Meilisearch compares it with numbers as a number (when it reads
// as one) and with strings as a string, so both forms are kept.
type filterValue struct {
	str   string  // normalized text (see normalizeString)
	num   float64 // valid when isNum
	isNum bool
}

var numberRE = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

func newFilterValue(raw string) filterValue {
	v := filterValue{str: normalizeString(raw)}
	if numberRE.MatchString(raw) {
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			v.num, v.isNum = f, true
		}
	}
	return v
}

// normalizeString is how string values compare on the embedded backend: trimmed and lower
// case. Meilisearch also applies Unicode compatibility decomposition, which we do not.
func normalizeString(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// keywords cannot be bare values or attributes.
var keywords = map[string]bool{"AND": true, "OR": true, "NOT": true, "TO": true, "IN": true,
	"EXISTS": true, "IS": true, "NULL": true, "EMPTY": true, "STARTS": true, "WITH": true,
	"CONTAINS": true}

var attrRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// parseFilter parses a filter expression. A blank filter gives a nil node.
func parseFilter(s string) (filterNode, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tokEOF {
		return nil, nil
	}
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("unexpected %s at offset %d (missing AND or OR?)", t, t.pos)
	}
	return n, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

// next consumes a token; the final tokEOF is never consumed.
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// isKeyword reports whether the next token is the bare keyword kw.
func (p *parser) isKeyword(kw string) bool {
	t := p.peek()
	return t.kind == tokWord && t.text == kw
}

func (p *parser) expectKeyword(kw string) error {
	if t := p.next(); t.kind != tokWord || t.text != kw {
		return fmt.Errorf("expected `%s` at offset %d, got %s", kw, t.pos, t)
	}
	return nil
}

func (p *parser) parseOr() (filterNode, error) {
	n, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	kids := []filterNode{n}
	for p.isKeyword("OR") {
		p.next()
		if n, err = p.parseAnd(); err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &orNode{kids}, nil
}

func (p *parser) parseAnd() (filterNode, error) {
	n, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	kids := []filterNode{n}
	for p.isKeyword("AND") {
		p.next()
		if n, err = p.parseNot(); err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &andNode{kids}, nil
}

func (p *parser) parseNot() (filterNode, error) {
	switch {
	case p.isKeyword("NOT"):
		p.next()
		n, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &notNode{n}, nil
	case p.peek().kind == tokLParen:
		open := p.next()
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tokRParen {
			return nil, fmt.Errorf("missing `)` for the `(` at offset %d: got %s at offset %d", open.pos, t, t.pos)
		}
		return n, nil
	}
	return p.parseCond()
}

func (p *parser) parseAttr() (string, error) {
	t := p.next()
	switch {
	case t.kind == tokEOF:
		return "", fmt.Errorf("expected a condition at offset %d, got end of filter", t.pos)
	case t.kind == tokWord && keywords[t.text]:
		return "", fmt.Errorf("expected an attribute at offset %d, got the keyword %s (quote it to use it as a name)", t.pos, t)
	case t.kind != tokWord && t.kind != tokString:
		return "", fmt.Errorf("expected an attribute at offset %d, got %s", t.pos, t)
	case !attrRE.MatchString(t.text):
		return "", fmt.Errorf("invalid attribute name %s at offset %d: use only [A-Za-z0-9_.-]", t, t.pos)
	}
	return t.text, nil
}

func (p *parser) parseValue() (filterValue, error) {
	t := p.next()
	switch {
	case t.kind == tokString:
		return newFilterValue(t.text), nil
	case t.kind == tokWord && keywords[t.text]:
		return filterValue{}, fmt.Errorf("expected a value at offset %d, got the keyword %s (quote it to use it as a value)", t.pos, t)
	case t.kind == tokWord:
		return newFilterValue(t.text), nil
	case t.kind == tokEOF:
		return filterValue{}, fmt.Errorf("expected a value at offset %d, got end of filter", t.pos)
	}
	return filterValue{}, fmt.Errorf("expected a value at offset %d, got %s", t.pos, t)
}

var compareOps = map[string]condOp{"=": opEq, "!=": opEq, ">": opGt, ">=": opGe, "<": opLt, "<=": opLe}

func (p *parser) parseCond() (filterNode, error) {
	attr, err := p.parseAttr()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tokOp:
		p.next()
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		c := &condNode{attr: attr, op: compareOps[t.text], vals: []filterValue{v}}
		if t.text == "!=" {
			return &notNode{c}, nil
		}
		return c, nil
	case t.kind == tokWord && t.text == "NOT":
		p.next()
		return p.parseKeywordCond(attr, true)
	case t.kind == tokWord && keywords[t.text]:
		return p.parseKeywordCond(attr, false)
	case t.kind == tokWord || t.kind == tokString:
		lo, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("TO"); err != nil {
			return nil, err
		}
		hi, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		return &condNode{attr: attr, op: opRange, vals: []filterValue{lo, hi}}, nil
	}
	return nil, fmt.Errorf("expected an operator (= != > >= < <= TO IN EXISTS IS STARTS WITH) after `%s` at offset %d, got %s", attr, t.pos, t)
}

// parseKeywordCond parses the keyword operators; negated means a NOT was read after the
// attribute (NOT IN, NOT EXISTS, NOT STARTS WITH).
func (p *parser) parseKeywordCond(attr string, negated bool) (filterNode, error) {
	wrap := func(c *condNode) (filterNode, error) {
		if negated {
			return &notNode{c}, nil
		}
		return c, nil
	}
	t := p.next()
	switch t.text {
	case "IN":
		vals, err := p.parseList()
		if err != nil {
			return nil, err
		}
		return wrap(&condNode{attr: attr, op: opIn, vals: vals})
	case "EXISTS":
		return wrap(&condNode{attr: attr, op: opExists})
	case "STARTS":
		if err := p.expectKeyword("WITH"); err != nil {
			return nil, err
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		return wrap(&condNode{attr: attr, op: opStartsWith, vals: []filterValue{v}})
	case "IS":
		if negated {
			break
		}
		if p.isKeyword("NOT") {
			p.next()
			negated = true
		}
		switch w := p.next(); {
		case w.kind == tokWord && w.text == "NULL":
			return wrap(&condNode{attr: attr, op: opIsNull})
		case w.kind == tokWord && w.text == "EMPTY":
			return wrap(&condNode{attr: attr, op: opIsEmpty})
		default:
			return nil, fmt.Errorf("expected NULL or EMPTY after IS at offset %d, got %s", w.pos, w)
		}
	case "CONTAINS":
		return nil, fmt.Errorf("CONTAINS at offset %d is not supported", t.pos)
	}
	return nil, fmt.Errorf("expected an operator after `%s` at offset %d, got %s", attr, t.pos, t)
}

// parseList parses "[" [value {"," value} [","]] "]".
func (p *parser) parseList() ([]filterValue, error) {
	open := p.next()
	if open.kind != tokLBracket {
		return nil, fmt.Errorf("expected `[` after IN at offset %d, got %s", open.pos, open)
	}
	vals := []filterValue{}
	for {
		if p.peek().kind == tokRBracket {
			p.next()
			return vals, nil
		}
		if p.peek().kind == tokEOF {
			return nil, fmt.Errorf("missing `]` for the `[` at offset %d", open.pos)
		}
		v, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		switch t := p.next(); t.kind {
		case tokComma:
		case tokRBracket:
			return vals, nil
		case tokEOF:
			return nil, fmt.Errorf("missing `]` for the `[` at offset %d", open.pos)
		default:
			return nil, fmt.Errorf("expected `,` or `]` in the list at offset %d, got %s", t.pos, t)
		}
	}
}

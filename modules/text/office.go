package text

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// OOXML (DOCX, PPTX, XLSX) and ODF (ODT, ODS, ODP): zip containers of XML, read with
// archive/zip and encoding/xml as token streams under the container limits. DOCX is one
// segment; each slide and sheet is its own segment ("slide": n, "sheet": name).
func init() {
	register(&format{name: "docx", read: readDOCX})
	register(&format{name: "pptx", read: readPPTX})
	register(&format{name: "xlsx", read: readXLSX})
	register(&format{name: "odt", read: readODF})
	register(&format{name: "ods", read: readODF})
	register(&format{name: "odp", read: readODF})
}

// runText writes the text of WordprocessingML and DrawingML runs: character data inside <t>
// elements, a space for <tab>, a line for <br>/<cr> and at each paragraph's end (<p>).
func runText(d *Doc) func(xml.Token, int) error {
	inT := false
	return func(tok xml.Token, _ int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inT = true
			case "tab":
				return d.space()
			case "br", "cr":
				return d.newline()
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inT = false
			case "p":
				return d.newline()
			}
		case xml.CharData:
			if inT {
				return d.writeBytes(t)
			}
		}
		return nil
	}
}

func readDOCX(ctx context.Context, src *source, d *Doc) error {
	c, err := openContainer(src)
	if err != nil {
		return err
	}
	if err := ooxmlProps(ctx, c, d); err != nil {
		return err
	}
	if !c.has("word/document.xml") {
		return fmt.Errorf("not a DOCX: no word/document.xml")
	}
	for _, part := range []string{"word/document.xml", "word/footnotes.xml", "word/endnotes.xml"} {
		if !c.has(part) {
			continue
		}
		if err := c.walk(ctx, part, runText(d)); err != nil {
			return ignoreFull(err)
		}
		if d.newline() != nil {
			return nil
		}
	}
	return nil
}

// numbered returns the entries dir/prefixN.xml in the order of N.
func numbered(c *container, dir, prefix string) []string {
	type e struct {
		n    int
		name string
	}
	var es []e
	for name := range c.byName {
		rest, ok := strings.CutPrefix(name, dir+prefix)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(rest, ".xml")); err == nil && strings.HasSuffix(rest, ".xml") {
			es = append(es, e{n, name})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].n < es[j].n })
	out := make([]string, len(es))
	for i, x := range es {
		out[i] = x.name
	}
	return out
}

func readPPTX(ctx context.Context, src *source, d *Doc) error {
	c, err := openContainer(src)
	if err != nil {
		return err
	}
	if err := ooxmlProps(ctx, c, d); err != nil {
		return err
	}
	slides := numbered(c, "ppt/slides/", "slide")
	if len(slides) == 0 && !c.has("ppt/presentation.xml") {
		return fmt.Errorf("not a PPTX: no ppt/presentation.xml")
	}
	d.Pages = len(slides)
	for i, s := range slides {
		if i >= src.lim.MaxPages {
			d.Truncated = fmt.Sprintf("read the first %d of %d slides", i, len(slides))
			break
		}
		d.segment(map[string]any{"slide": i + 1})
		if err := c.walk(ctx, s, runText(d)); err != nil {
			return ignoreFull(err)
		}
	}
	return nil
}

func readXLSX(ctx context.Context, src *source, d *Doc) error {
	c, err := openContainer(src)
	if err != nil {
		return err
	}
	if err := ooxmlProps(ctx, c, d); err != nil {
		return err
	}
	if !c.has("xl/workbook.xml") {
		return fmt.Errorf("not an XLSX: no xl/workbook.xml")
	}
	// Sheet names in workbook order, and their parts through the relationships.
	type sheet struct{ name, rid string }
	var sheets []sheet
	if err := c.walk(ctx, "xl/workbook.xml", func(tok xml.Token, _ int) error {
		if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "sheet" {
			sheets = append(sheets, sheet{attr(t, "name"), attr(t, "id")})
		}
		return nil
	}); err != nil {
		return err
	}
	targets := map[string]string{}
	if c.has("xl/_rels/workbook.xml.rels") {
		if err := c.walk(ctx, "xl/_rels/workbook.xml.rels", func(tok xml.Token, _ int) error {
			if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "Relationship" {
				targets[attr(t, "Id")] = resolve("xl/workbook.xml", attr(t, "Target"))
			}
			return nil
		}); err != nil {
			return err
		}
	}
	shared, err := sharedStrings(ctx, c, d)
	if err != nil {
		return err
	}
	for i, sh := range sheets {
		if i >= src.lim.MaxPages {
			d.Truncated = fmt.Sprintf("read the first %d of %d sheets", i, len(sheets))
			break
		}
		part := targets[sh.rid]
		if part == "" {
			part = fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1)
		}
		if !c.has(part) {
			continue
		}
		d.segment(map[string]any{"sheet": sh.name})
		if err := c.walk(ctx, part, cellText(d, shared)); err != nil {
			return ignoreFull(err)
		}
	}
	return nil
}

// sharedStrings reads xl/sharedStrings.xml; the strings count against the text limit.
func sharedStrings(ctx context.Context, c *container, d *Doc) ([]string, error) {
	if !c.has("xl/sharedStrings.xml") {
		return nil, nil
	}
	var out []string
	var cur strings.Builder
	inT, budget := false, d.lim.MaxTextBytes
	err := c.walk(ctx, "xl/sharedStrings.xml", func(tok xml.Token, _ int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			inT = t.Name.Local == "t"
		case xml.EndElement:
			inT = false
			if t.Name.Local == "si" {
				out = append(out, cur.String())
				cur.Reset()
			}
		case xml.CharData:
			if inT {
				if budget -= len(t); budget < 0 {
					return errTextFull
				}
				cur.Write(t)
			}
		}
		return nil
	})
	if textFull(err) {
		d.Truncated = "shared strings over the text limit"
		err = nil
	}
	return out, err
}

// cellText writes a worksheet's cell values: a tab between cells, a line per row.
func cellText(d *Doc, shared []string) func(xml.Token, int) error {
	typ, inV, inT, first := "", false, false, true
	return func(tok xml.Token, _ int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				first = true
			case "c":
				typ = attr(t, "t")
				if !first {
					return d.write("\t")
				}
				first = false
			case "v":
				inV = true
			case "t":
				inT = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v":
				inV = false
			case "t":
				inT = false
			case "row":
				return d.newline()
			}
		case xml.CharData:
			switch {
			case inV && typ == "s":
				if i, err := strconv.Atoi(strings.TrimSpace(string(t))); err == nil && i >= 0 && i < len(shared) {
					return d.write(shared[i])
				}
			case inV && typ != "b", inT:
				return d.write(strings.TrimSpace(string(t)))
			}
		}
		return nil
	}
}

// ooxmlProps reads docProps/core.xml (title, creator, language, dates) and docProps/app.xml
// (page or slide count); both are optional.
func ooxmlProps(ctx context.Context, c *container, d *Doc) error {
	fields := map[string]*string{}
	var title, creator, lang, created, modified, pages string
	fields["title"], fields["creator"], fields["language"], fields["created"], fields["modified"] = &title, &creator, &lang, &created, &modified
	if err := collect(ctx, c, "docProps/core.xml", fields); err != nil {
		return err
	}
	if err := collect(ctx, c, "docProps/app.xml", map[string]*string{"Pages": &pages}); err != nil {
		return err
	}
	d.Title, d.Author, d.Language = title, creator, lang
	d.Created, d.Modified = parseDate(created), parseDate(modified)
	if n, err := strconv.Atoi(strings.TrimSpace(pages)); err == nil && n > 0 {
		d.Pages = n
	}
	return nil
}

// collect sets each field to the character data of the first element with that local name.
// A missing part is not an error.
func collect(ctx context.Context, c *container, part string, fields map[string]*string) error {
	if !c.has(part) {
		return nil
	}
	cur := ""
	err := c.walk(ctx, part, func(tok xml.Token, _ int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			cur = t.Name.Local
		case xml.EndElement:
			cur = ""
		case xml.CharData:
			if p, ok := fields[cur]; ok && *p == "" && len(t) < 4096 {
				*p = string(t)
			}
		}
		return nil
	})
	var bomb errBomb
	if errors.As(err, &bomb) {
		return err
	}
	return nil // damaged properties do not spoil the text
}

func readODF(ctx context.Context, src *source, d *Doc) error {
	c, err := openContainer(src)
	if err != nil {
		return err
	}
	if !c.has("content.xml") {
		return fmt.Errorf("not an OpenDocument file: no content.xml")
	}
	if err := odfMeta(ctx, c, d); err != nil {
		return err
	}
	slides, sheets, inNote := 0, 0, 0
	err = c.walk(ctx, "content.xml", func(tok xml.Token, depth int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Space + ":" + t.Name.Local {
			case "table:table":
				if d.Format == "ods" {
					if sheets++; sheets > src.lim.MaxPages {
						return errTextFull
					}
					d.segment(map[string]any{"sheet": attr(t, "name")})
				}
			case "draw:page":
				if slides++; slides > src.lim.MaxPages {
					return errTextFull
				}
				d.segment(map[string]any{"slide": slides})
			case "text:s", "text:tab":
				return d.space()
			case "text:line-break":
				return d.newline()
			case "presentation:notes":
				inNote = depth
			}
		case xml.EndElement:
			switch t.Name.Space + ":" + t.Name.Local {
			case "text:p", "text:h", "table:table-row":
				return d.newline()
			case "table:table-cell":
				return d.write("\t")
			case "presentation:notes":
				inNote = 0
			}
		case xml.CharData:
			if inNote == 0 {
				return d.writeBytes(t)
			}
		}
		return nil
	})
	if d.Format == "odp" && d.Pages == 0 {
		d.Pages = slides
	}
	return ignoreFull(err)
}

// odfMeta reads meta.xml: title, creator, language, dates and the page count.
func odfMeta(ctx context.Context, c *container, d *Doc) error {
	if !c.has("meta.xml") {
		return nil
	}
	cur := ""
	var creator, initial string
	err := c.walk(ctx, "meta.xml", func(tok xml.Token, _ int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			cur = t.Name.Space + ":" + t.Name.Local
			if cur == "meta:document-statistic" {
				if n, err := strconv.Atoi(attr(t, "page-count")); err == nil {
					d.Pages = n
				}
			}
		case xml.EndElement:
			cur = ""
		case xml.CharData:
			s := string(t)
			switch cur {
			case "dc:title":
				d.Title = s
			case "dc:creator":
				creator = s
			case "meta:initial-creator":
				initial = s
			case "dc:language":
				d.Language = s
			case "meta:creation-date":
				d.Created = parseDate(s)
			case "dc:date":
				d.Modified = parseDate(s)
			}
		}
		return nil
	})
	d.Author = initial
	if d.Author == "" {
		d.Author = creator
	}
	var bomb errBomb
	if errors.As(err, &bomb) {
		return err
	}
	return nil
}

package text

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"
)

// EPUB: META-INF/container.xml names the package document (OPF), whose metadata gives title,
// author, language and dates and whose spine orders the chapters; each chapter (XHTML) is a
// segment with "chapter" (1-based) and "chapter_title" when it has a <title>.
func init() { register(&format{name: "epub", read: readEPUB}) }

func readEPUB(ctx context.Context, src *source, d *Doc) error {
	c, err := openContainer(src)
	if err != nil {
		return err
	}
	opf := ""
	if err := c.walk(ctx, "META-INF/container.xml", func(tok xml.Token, _ int) error {
		if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "rootfile" && opf == "" {
			opf = strings.TrimPrefix(attr(t, "full-path"), "/")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("not an EPUB: %w", err)
	}
	if opf == "" || !c.has(opf) {
		return fmt.Errorf("not an EPUB: no package document")
	}
	hrefs := map[string]string{}
	var spine []string
	cur := ""
	var modified string
	if err := c.walk(ctx, opf, func(tok xml.Token, _ int) error {
		switch t := tok.(type) {
		case xml.StartElement:
			cur = t.Name.Local
			switch t.Name.Local {
			case "item":
				hrefs[attr(t, "id")] = attr(t, "href")
			case "itemref":
				if attr(t, "linear") != "no" {
					spine = append(spine, attr(t, "idref"))
				}
			case "meta":
				if attr(t, "property") == "dcterms:modified" {
					cur = "modified"
				}
			}
		case xml.EndElement:
			cur = ""
		case xml.CharData:
			s := string(t)
			switch cur {
			case "title":
				if d.Title == "" {
					d.Title = s
				}
			case "creator":
				if d.Author == "" {
					d.Author = s
				}
			case "language":
				if d.Language == "" {
					d.Language = s
				}
			case "date":
				if d.Created.IsZero() {
					d.Created = parseDate(s)
				}
			case "modified":
				modified = s
			}
		}
		return nil
	}); err != nil {
		return err
	}
	d.Modified = parseDate(modified)
	n := 0
	for _, id := range spine {
		href := hrefs[id]
		if href == "" {
			continue
		}
		if u, err := url.PathUnescape(strings.SplitN(href, "#", 2)[0]); err == nil {
			href = u
		}
		part := resolve(opf, href)
		if !c.has(part) {
			continue
		}
		if n >= src.lim.MaxPages {
			d.Truncated = fmt.Sprintf("read the first %d of %d chapters", n, len(spine))
			break
		}
		n++
		loc := map[string]any{"chapter": n}
		d.segment(loc)
		rc, err := c.open(part)
		if err != nil {
			return err
		}
		title, err := htmlText(ctx, rc, d, false)
		rc.Close()
		if title = clean(title); title != "" {
			loc["chapter_title"] = title
		}
		if err != nil {
			return ignoreFull(err)
		}
		if d.Truncated != "" {
			break
		}
	}
	d.Pages = 0
	return nil
}

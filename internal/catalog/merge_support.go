package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LiveJob reports whether token is the current token of the (docID, module) job and the
// document is live, i.e. a result carrying that token would be merged now. The merger asks
// before writing module files, so stale results never touch the metadata directory.
func (c *Catalog) LiveJob(ctx context.Context, docID, module, token string) (bool, error) {
	var one int
	err := c.r.QueryRowContext(ctx, `SELECT 1 FROM jobs j JOIN documents d ON d.id = j.doc_id
		WHERE j.doc_id = ? AND j.module = ? AND j.token = ? AND d.retired = 0`, docID, module, token).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("catalog: live job %s/%s: %w", docID, module, err)
	}
	return true, nil
}

// Package docs holds the project's documentation: the Markdown pages in this
// directory (start at README.md). It has no code; its test checks that every
// link between the pages, every link from the top-level README into docs/,
// and every docs/<page>.md#<section> reference in the Go sources points at a
// page and a section that exist.
package docs

// Package picture draws the public state of a Konter a Matt match as PNG pictures for the chat:
// the stripe board ("Lee", the scorer's sheet) and the table with the trick on it. It reads only
// public data (the stripe board, the score sheet and the public core.View), never a hand.
//
// Texts come in already localized (Labels); names may hold any Unicode, and a character the
// embedded Go fonts lack is drawn as a box. Pictures are drawn in pure Go with the Go fonts and
// the x/image vector rasterizer, in a light or a dark Theme, and come out as 8-bit paletted PNGs
// of a few tens of kilobytes. Each picture has an AltText for screen readers and notifications.
//
// All functions are safe for concurrent use.
package picture

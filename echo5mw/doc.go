// Package echo5mw is ratewarden's middleware for Echo v5.
package echo5mw

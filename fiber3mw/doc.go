// Package fiber3mw is ratewarden's middleware for Fiber v3.
package fiber3mw

package server

// itemsEnabled reports whether the Store endpoints are served.
func (s *Server) itemsEnabled() bool { return false }

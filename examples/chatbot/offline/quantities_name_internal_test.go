package offline

import "testing"

// TestQuantitiesAfterInitialism checks that a number after an initialism
// names it ("SOC 2", "ISO 27001") and counts nothing, while a count
// elsewhere in the text still is one.
func TestQuantitiesAfterInitialism(t *testing.T) {
	if got := quantities("Is the SOC 2 report renewed?"); len(got) != 0 {
		t.Errorf(`quantities("Is the SOC 2 report renewed?") = %v, want none`, got)
	}
	got := quantities("Is ISO 27001 renewed within 2 business days?")
	if len(got) != 1 || got[0] != (quantity{"2", "day"}) {
		t.Errorf("quantities = %v, want [{2 day}]", got)
	}
}

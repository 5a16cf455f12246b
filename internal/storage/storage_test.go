package storage

import "testing"

func TestPolicies(t *testing.T) {
	one, ok := ByName("one_ssd")
	if !ok || one.ID != 10 {
		t.Fatalf("ONE_SSD = %+v", one)
	}
	got := one.ChooseTypes(3)
	if got[0] != SSD || got[1] != Disk || got[2] != Disk {
		t.Errorf("ONE_SSD types for 3 replicas = %v", got)
	}
	all, _ := ByID(AllSSDID)
	for _, ty := range all.ChooseTypes(3) {
		if ty != SSD {
			t.Errorf("ALL_SSD gave %v", ty)
		}
	}
	if want := "BlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], replicationFallbacks=[ARCHIVE]}"; mustID(t, HotID).String() != want {
		t.Errorf("HOT string = %s", mustID(t, HotID))
	}
	if _, err := ParseType("ram_disk"); err != nil {
		t.Error(err)
	}
	if _, err := ParseType("floppy"); err == nil {
		t.Error("floppy accepted")
	}
}

func mustID(t *testing.T, id uint8) Policy {
	p, ok := ByID(id)
	if !ok {
		t.Fatalf("no policy %d", id)
	}
	return p
}

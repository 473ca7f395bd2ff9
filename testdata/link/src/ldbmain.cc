// ldbmain.cc: opens a LevelDB database (cc/src/leveldb), writes and reads a
// key, so LevelDB can be linked into a C++ executable for the link goldens.
// Public domain / CC0.
#include <cstdio>
#include <string>
#include "leveldb/db.h"

int main(int argc, char **argv)
{
	leveldb::DB *db = nullptr;
	leveldb::Options opt;
	opt.create_if_missing = true;
	leveldb::Status s = leveldb::DB::Open(opt, argc > 1 ? argv[1] : "/tmp/ldbmain.db", &db);
	if (!s.ok()) {
		std::fprintf(stderr, "%s\n", s.ToString().c_str());
		return 1;
	}
	std::string v;
	db->Put(leveldb::WriteOptions(), "key", "value");
	s = db->Get(leveldb::ReadOptions(), "key", &v);
	std::printf("%s %s\n", s.ToString().c_str(), v.c_str());
	delete db;
	return 0;
}

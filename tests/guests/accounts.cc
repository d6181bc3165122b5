// accounts: C++ with the standard library's containers, for gdb's
// pretty printers of them: deposit() adds to a std::map<std::string, long>
// three times; the program prints the balances.
#include <cstdio>
#include <map>
#include <string>

struct Bank {
	std::map<std::string, long> accounts;
	void deposit(const std::string &who, long amount) { accounts[who] += amount; }
};

int main() {
	Bank b;
	b.deposit("alice", 10);
	b.deposit("bob", 20);
	b.deposit("alice", 5);
	for (const auto &[who, balance] : b.accounts)
		std::printf("%s %ld\n", who.c_str(), balance);
	return 0;
}

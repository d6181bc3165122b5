// sysv_times makes a System V shared memory segment, semaphore set and
// message queue, uses each, and prints the times their IPC_STAT tells
// (made, attached, operated on, sent to), then /proc/sysvipc/shm, which
// ipcs reads.
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

int main(void) {
	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	int msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (shm < 0 || sem < 0 || msq < 0) {
		perror("get");
		return 1;
	}
	if (shmat(shm, NULL, 0) == (void *)-1) {
		perror("shmat");
		return 1;
	}
	struct sembuf op = {0, 1, 0};
	struct {
		long type;
		char text[4];
	} m = {1, "abc"};
	if (semop(sem, &op, 1) < 0 || msgsnd(msq, &m, sizeof m.text, 0) < 0) {
		perror("semop or msgsnd");
		return 1;
	}
	struct shmid_ds sd;
	struct semid_ds ss;
	struct msqid_ds md;
	union {
		int val;
		struct semid_ds *buf;
	} arg = {.buf = &ss};
	if (shmctl(shm, IPC_STAT, &sd) < 0 || semctl(sem, 0, IPC_STAT, arg) < 0 || msgctl(msq, IPC_STAT, &md) < 0) {
		perror("IPC_STAT");
		return 1;
	}
	printf("shm ctime %ld atime %ld dtime %ld\n", (long)sd.shm_ctime, (long)sd.shm_atime, (long)sd.shm_dtime);
	printf("sem ctime %ld otime %ld\n", (long)ss.sem_ctime, (long)ss.sem_otime);
	printf("msg ctime %ld stime %ld rtime %ld\n", (long)md.msg_ctime, (long)md.msg_stime, (long)md.msg_rtime);
	fflush(stdout);
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f))
		fputs(line, stdout);
	shmctl(shm, IPC_RMID, NULL);
	semctl(sem, 0, IPC_RMID);
	msgctl(msq, IPC_RMID, NULL);
	return 0;
}

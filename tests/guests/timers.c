/* timers.c: alarm+pause, setitimer with 10 periodic SIGALRMs, a POSIX
 * timer (timer_create) delivering SIGRTMIN with its sigevent value, a
 * periodic timerfd read until 3 expirations, and clock_nanosleep with
 * TIMER_ABSTIME. Natively it takes about 7 s; under hermit, whose timers
 * run in virtual time, it takes no wall time and prints the same counts. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
static volatile int alarms, ticks, posix;
static void on_alrm(int s){(void)s; alarms++;}
static void on_rt(int s, siginfo_t *si, void *u){(void)s;(void)u; if (si->si_value.sival_int==42) posix++;}
int main(void){
  signal(SIGALRM, on_alrm);
  alarm(2); pause(); printf("alarm+pause: %d\n", alarms);
  struct itimerval it={{0,100000},{0,100000}}; setitimer(ITIMER_REAL,&it,NULL);
  while (alarms < 11) pause();
  struct itimerval off={{0,0},{0,0}}; setitimer(ITIMER_REAL,&off,NULL);
  printf("setitimer: %d\n", alarms-1);
  struct sigaction sa; memset(&sa,0,sizeof sa); sa.sa_sigaction=on_rt; sa.sa_flags=SA_SIGINFO; sigaction(SIGRTMIN,&sa,NULL);
  struct sigevent sev; memset(&sev,0,sizeof sev); sev.sigev_notify=SIGEV_SIGNAL; sev.sigev_signo=SIGRTMIN; sev.sigev_value.sival_int=42;
  timer_t tid; timer_create(CLOCK_MONOTONIC,&sev,&tid);
  struct itimerspec ts={{0,50000000},{0,50000000}}; timer_settime(tid,0,&ts,NULL);
  while (posix < 5) pause();
  timer_delete(tid); printf("timer_create: %d\n", posix);
  int fd=timerfd_create(CLOCK_MONOTONIC,0); struct itimerspec t2={{1,0},{1,0}}; timerfd_settime(fd,0,&t2,NULL);
  uint64_t total=0, n; while (total < 3) { read(fd,&n,8); total+=n; } printf("timerfd: %llu\n",(unsigned long long)total);
  struct timespec now; clock_gettime(CLOCK_MONOTONIC,&now); now.tv_sec+=3;
  clock_nanosleep(CLOCK_MONOTONIC,TIMER_ABSTIME,&now,NULL);
  struct timespec after; clock_gettime(CLOCK_MONOTONIC,&after); printf("abs sleep reached: %d\n", after.tv_sec >= now.tv_sec);
  return 0;
}

"""The Python side of tests/integration/s3_server.sh (tests/unit/s3_server.c
is the C side): a real S3 server, one-node Ceph + radosgw, for a test.

    s3 = S3Server.start_or_skip('test_name')   # exits with "# SKIP" when allowed
    s3.endpoint, s3.bucket, s3.region, s3.key, s3.secret
    s3.https_endpoint, s3.ca_file               # the same store over https
    S3Server.start(sts=True)                    # one with STS (GetSessionToken)
    s3.client()                                 # a boto3 client on it
    s3.stop()                                   # also at exit

It may skip only when the Ceph and radosgw programs are not installed and
FLOE_TEST_S3 is unset or "0" (.ci/run sets it; scripts/setup installs the
packages); a server that is installed but does not start is a failure."""
import atexit
import os
import subprocess
import sys
import tempfile

_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 's3_server.sh')


class S3ServerError(Exception):
    """The S3 server did not start."""


class S3Server:
    def __init__(self, d, env):
        self.dir = d
        self.endpoint = env['S3_ENDPOINT']
        self.bucket = env['S3_BUCKET']
        self.region = env['S3_REGION']
        self.key = env['S3_ACCESS_KEY_ID']
        self.secret = env['S3_SECRET_ACCESS_KEY']
        self.https_endpoint = env['S3_HTTPS_ENDPOINT']
        self.ca_file = env['S3_CA_FILE']
        atexit.register(self.stop)

    @classmethod
    def start_or_skip(cls, name):
        req = os.environ.get('FLOE_TEST_S3', '') not in ('', '0')
        r = subprocess.run([_SH, 'available'], capture_output=True, text=True)
        if r.returncode != 0:
            why = r.stderr.strip() or 's3_server.sh available failed'
            if req:
                raise S3ServerError('%s (FLOE_TEST_S3 requires it)' % why)
            print('ok - %s # SKIP %s' % (name, why), flush=True)
            sys.exit(0)
        return cls.start()

    @classmethod
    def start(cls, sts=False):
        """A server (after start_or_skip found them installed); with sts, its
        STS answers GetSessionToken (and a bad signature is AccessDenied)."""
        d = tempfile.mkdtemp(prefix='floe-s3.')
        env = dict(os.environ, S3_OWNER_PID=str(os.getpid()),  # a watchdog if we die
                   S3_STS='1' if sts else '0')
        r = subprocess.run([_SH, 'start', d], capture_output=True, text=True, timeout=300, env=env)
        if r.returncode != 0:
            raise S3ServerError('the S3 server did not start: %s' % (r.stderr.strip() or r.stdout))
        env = {}
        with open(os.path.join(d, 'env')) as fh:
            for line in fh:
                k, _, v = line.strip().partition('=')
                env[k] = v
        return cls(d, env)

    def client(self):
        import boto3
        from botocore.config import Config
        return boto3.client('s3', endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.key, aws_secret_access_key=self.secret,
                            config=Config(s3={'addressing_style': 'path'}))

    def stop(self):
        if self.dir:
            subprocess.run([_SH, 'stop', self.dir], capture_output=True, timeout=60)
            self.dir = None
